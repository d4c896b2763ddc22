import type { HostLine } from "../../governance/host/host-lines.ts";
import type { Clock } from "../../governance/time/clock.ts";
import type { HostEvent } from "../runtime/host-event.ts";
import type { Timers } from "../runtime/timers.ts";

/**
 * The jobs a host's hooks do for governance, as `governance.hook.duration{governance.hook}` names them: the same names
 * on every host, whichever host hooks do the job there (docs/observability.md).
 */
export const HOOK_JOBS = ["event", "prompt", "model.step", "compaction", "tool.execute.before", "tool.execute.after", "shell"] as const;
export type HookJob = (typeof HOOK_JOBS)[number];

/** What every adapter's entry accepts besides the host's own input: the test's clock and timers. */
export type AdapterOptions = { clock?: Clock; timers?: Timers };

/**
 * The contract of a host adapter (unstorage's driver contract): each folder plugin/opencode-N/ exports one `adapter`
 * (its adapter.ts) declared `satisfies HostAdapter<…>`, so an adapter missing a member does not compile, and the one
 * contract suite (test/host-contract/adapter-contract.test.ts) runs on every adapter listed in plugin/adapters.ts.
 * Adding a host: one folder with these members, one row in governance/host/host-lines.ts, one entry in adapters.ts.
 *
 * - `Input`/`Instance`: what the host hands the entry and what it takes back (OpenCode 1: `PluginInput` → `Hooks`;
 *   OpenCode 2: its `ctx` → a cleanup).
 * - `Raw`: the host's raw event, which only `parseEvents` reads.
 * - `Hook`: the host's hook names.
 */
export type HostAdapter<Input, Instance, Raw, Hook extends string, Options extends AdapterOptions = AdapterOptions> = {
  /** Its row of HOST_LINES: every tool name and limit the adapter translates comes from there. */
  readonly line: HostLine;
  /** setup.ts: the entry the host calls. One runtime, every hook wired through plugin/wiring/hook-wiring.ts. */
  readonly setup: (input: Input, options?: Options) => Promise<Instance>;
  /** events.ts: the host's ONE event parser, raw event → the plugin's host events (read by governance and telemetry). */
  readonly parseEvents: (raw: Raw) => HostEvent[];
  /** Which host hooks do each job (every job on every host): the wiring times each under its job's name. */
  readonly jobs: { readonly [J in HookJob]: readonly Hook[] };
  /** The host's other entries, each with why it is not wrapped as a job (start-up only, or deliberately uncontained). */
  readonly outsideJobs: Readonly<Partial<Record<Hook, string>>>;
};
