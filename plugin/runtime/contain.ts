/**
 * A deliberate block: the only error that may reach OpenCode from a hook. Its message is written for the model and
 * the user (OpenCode shows a throw from `tool.execute.before` as the tool's result).
 */
export class GovernanceBlock extends Error {
  override readonly name = "GovernanceBlock";
}

export type HookErrorSink = (hook: string, error: unknown) => void;

/** What a hook answers when it had nothing to wait for: one settled promise, shared (no allocation per call). */
export const DONE: Promise<void> = Promise.resolve();

/**
 * Wraps a hook so that an unexpected error is reported and swallowed: OpenCode awaits hooks without try/catch, so a
 * governance bug would otherwise break the user's session. GovernanceBlock is re-thrown on purpose. A hook that
 * returns nothing was done at once (most events of a step, issue 31): the answer is `DONE`.
 */
export function contain<A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void> | undefined, sink: HookErrorSink): (...args: A) => Promise<void> {
  const failed = (error: unknown): Promise<void> => {
    if (error instanceof GovernanceBlock) return Promise.reject(error);
    try {
      sink(hook, error);
    } catch {
      // The sink itself failed (e.g. disk full): nothing more we can do without risking the session.
    }
    return DONE;
  };
  return (...args: A) => {
    let result: Promise<void> | undefined;
    try {
      result = fn(...args);
    } catch (error) {
      return failed(error);
    }
    return result ? result.then(undefined, failed) : DONE;
  };
}
