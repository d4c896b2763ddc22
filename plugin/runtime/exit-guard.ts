/**
 * What a plugin gets when its process ends (checked on opencode 1.18.33, test/e2e/process-exit.test.ts):
 * - `opencode run` ends with the `dispose` hook, awaited, then `process.exit` (no `beforeExit`);
 * - `opencode serve` has no handler of its own for SIGTERM/SIGINT/SIGHUP: the default action kills it at once, no
 *   `dispose`, no `exit` event.
 * So each plugin instance registers its flush here; the first registration installs one handler per signal for the
 * whole process. On a signal every registered flush runs (bounded by `SIGNAL_FLUSH_MS`), then the handlers remove
 * themselves and, when nobody else listens for that signal, the signal is raised again so the process ends as it
 * would have without governance (same signal, same exit status). Process-wide by nature (signals are): the one state
 * outside a plugin instance, and it holds nothing but the instances' flush functions until they dispose.
 */
export const EXIT_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
/** The most a signal's exit is delayed by governance writing its last state. */
export const SIGNAL_FLUSH_MS = 2_000;

type Flush = () => Promise<unknown>;

const flushes = new Set<Flush>();
let installed: Map<NodeJS.Signals, () => void> | undefined;
let exiting = false;

/** Runs `flush` before the process ends on a signal; returns the function that unregisters it. */
export function onProcessExit(flush: Flush): () => void {
  flushes.add(flush);
  install();
  return () => {
    flushes.delete(flush);
    if (flushes.size === 0) uninstall();
  };
}

/** Registered flushes (for tests and the plugin's stats). */
export function exitFlushCount(): number {
  return flushes.size;
}

function install(): void {
  if (installed) return;
  installed = new Map();
  for (const signal of EXIT_SIGNALS) {
    const handler = () => void onSignal(signal);
    installed.set(signal, handler);
    process.on(signal, handler);
  }
}

function uninstall(): void {
  if (!installed) return;
  for (const [signal, handler] of installed) process.off(signal, handler);
  installed = undefined;
}

async function onSignal(signal: NodeJS.Signals): Promise<void> {
  if (exiting) return;
  exiting = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SIGNAL_FLUSH_MS);
  });
  await Promise.race([Promise.allSettled([...flushes].map((f) => Promise.resolve().then(f))), timeout]);
  clearTimeout(timer);
  uninstall();
  flushes.clear();
  // Someone else handles this signal (the host may add its own): it ran already and decides how to end.
  if (process.listenerCount(signal) > 0) return;
  process.kill(process.pid, signal);
}
