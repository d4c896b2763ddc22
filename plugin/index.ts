import type { Hooks, PluginInput, PluginModule } from "@opencode-ai/plugin";
import { ADAPTERS } from "./adapters.ts";
import { ExecutionStates } from "./opencode-2/api.ts";
import type { Cleanup, V2Context } from "./opencode-2/types.ts";
import { restoreProcessZodConfig } from "../governance/zod.ts";

// Every module above is evaluated, so every governance schema exists (built without zod's JIT): the host's zod gets
// its own setting back (governance/zod.ts).
restoreProcessZodConfig();

/**
 * The host adapters (plugin/adapters.ts) behind the entries each host line calls: `server` (OpenCode 1) and
 * `setup` (OpenCode 2). What a host adapter must do is its contract (plugin/wiring/host-adapter.ts).
 */

/** The OpenCode 1 entry: its adapter's setup, once this process is known to be an OpenCode 1 host. */
async function server(input: PluginInput): Promise<Hooks> {
  await enteredAsV1();
  return ADAPTERS[1].setup(input);
}

/**
 * Which entry this process's host uses. OpenCode 1.18 calls `setup` as well as `server` (it carries OpenCode 2's
 * module loader beside its own, a few seconds after `server`, with no `ctx.location`; seen on 1.18.33, test/e2e/
 * governance-prefix.test.ts): governance must run once, so the first `server` call wins and a V2 runtime already
 * started in this process is disposed. OpenCode 2 never calls `server`.
 */
type V2Instance = { cleanup: (end?: { handover?: boolean }) => Promise<void>; states: ExecutionStates };
const entry = { v1: false, v2: new Map<string, V2Instance>() };

async function enteredAsV1(): Promise<void> {
  entry.v1 = true;
  const running = [...entry.v2.values()];
  entry.v2.clear();
  for (const v2 of running) await v2.cleanup();
}

/**
 * The OpenCode 2 entry: its adapter's setup (plugin/opencode-2/setup.ts). Since 2.0.7 `opencode reload` (and `location.shutdown`)
 * destroys and re-creates plugin instances inside one process, and the order of the two is the host's: one runtime per
 * location, so a new instance for a location first ends the one still running there (its cleanup is idempotent: the
 * host calls it again later), and takes over what only memory held (which sessions are running a turn: Escape's
 * cascade and "checked idle" read it). Records, queues and the audit log are on disk and need no handover.
 */
async function setup(ctx: V2Context): Promise<Cleanup> {
  if (entry.v1) return () => undefined;
  const key = ctx.location?.directory ?? "";
  const prior = entry.v2.get(key);
  // The new instance takes over the old one's sessions: its end is a handover, not an exit (nothing is released).
  if (prior) await prior.cleanup({ handover: true });
  const states = prior?.states ?? new ExecutionStates();
  const end = await ADAPTERS[2].setup(ctx, { states });
  let ended: Promise<void> | undefined;
  const instance: V2Instance = {
    states,
    cleanup: (how) => {
      ended ??= Promise.resolve(end(how)).catch(() => undefined);
      if (entry.v2.get(key) === instance) entry.v2.delete(key);
      return ended;
    },
  };
  entry.v2.set(key, instance);
  return instance.cleanup;
}

/**
 * One default export for both lines: OpenCode 1 calls `server(input)` and ignores other keys; OpenCode 2's loader
 * (packages/core/src/plugin/module.ts @ 07db2b92) accepts `{ id, setup }` and ignores `server`.
 */
const plugin: PluginModule & { id: string; setup: typeof setup } = { id: "opencode-governance", server, setup };
export default plugin;
