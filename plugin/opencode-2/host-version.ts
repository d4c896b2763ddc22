import type { Runtime } from "../wiring/runtime.ts";
import type { V2Context } from "./types.ts";

/**
 * Which OpenCode 2 release runs the plugin: the host hands it over (`ctx.app.version`), unlike OpenCode 1
 * (plugin/opencode-1/host-version.ts reads it from the binary's package). Recorded (`host_detected`) for `doctor`,
 * with the location; a host that gives no `ctx.location` is noted (`host_notice`): events are then not filtered.
 */
export function hostVersion(ctx: V2Context): string | null {
  return ctx.app?.version ?? null;
}

export async function detectHost(rt: Runtime, ctx: V2Context): Promise<void> {
  const directory = ctx.location?.directory;
  await rt.ctx.record("host_detected", { line: 2, version: hostVersion(ctx), location: directory ?? null });
  if (directory === undefined) await rt.ctx.record("host_notice", { message: "OpenCode 2 gave no ctx.location: events are not filtered by location" });
}
