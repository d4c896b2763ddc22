import type { HostAdapter } from "../wiring/host-adapter.ts";
import { parseV2Event } from "./events.ts";
import { JOBS, OUTSIDE_JOBS, type SetupOptions, setupV2 } from "./setup.ts";
import type { V2Context, V2Event, V2Hook } from "./types.ts";

/** OpenCode 2's adapter, as the contract types it (plugin/wiring/host-adapter.ts). */
export const adapter = {
  line: 2,
  setup: setupV2,
  parseEvents: parseV2Event,
  jobs: JOBS,
  outsideJobs: OUTSIDE_JOBS,
} satisfies HostAdapter<V2Context, (end?: { handover?: boolean }) => Promise<void>, V2Event, V2Hook, SetupOptions>;
