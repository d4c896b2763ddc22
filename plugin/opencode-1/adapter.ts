import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import type { HostAdapter } from "../wiring/host-adapter.ts";
import { parseEvents } from "./events.ts";
import { JOBS, OUTSIDE_JOBS, setupV1 } from "./setup.ts";

/** OpenCode 1's adapter, as the contract types it (plugin/wiring/host-adapter.ts). */
export const adapter = {
  line: 1,
  setup: setupV1,
  parseEvents,
  jobs: JOBS,
  outsideJobs: OUTSIDE_JOBS,
} satisfies HostAdapter<PluginInput, Hooks, unknown, keyof Hooks>;
