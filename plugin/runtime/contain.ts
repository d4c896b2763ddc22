/**
 * A deliberate block: the only error that may reach OpenCode from a hook. Its message is written for the model and
 * the user (OpenCode shows a throw from `tool.execute.before` as the tool's result).
 */
export class GovernanceBlock extends Error {
  override readonly name = "GovernanceBlock";
}

export type HookErrorSink = (hook: string, error: unknown) => void;

/**
 * Wraps a hook so that an unexpected error is reported and swallowed: OpenCode awaits hooks without try/catch, so a
 * governance bug would otherwise break the user's session. GovernanceBlock is re-thrown on purpose.
 */
export function contain<A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void>, sink: HookErrorSink): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (error) {
      if (error instanceof GovernanceBlock) throw error;
      try {
        sink(hook, error);
      } catch {
        // The sink itself failed (e.g. disk full): nothing more we can do without risking the session.
      }
    }
  };
}
