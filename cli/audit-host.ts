import { CORE_LINE, type HostLine, hostLineNamed } from "../governance/host/host-lines.ts";

/**
 * The host line the plugin last started on in this project (its last `host_detected` audit line), or the core's line
 * when none says: what the CLI names tools in (records keep the core's `bash`; OpenCode 2 offers `shell`).
 */
export function auditHostLine(events: readonly { type: string; line?: unknown }[]): HostLine {
  const detected = events.findLast((e) => e.type === "host_detected");
  return hostLineNamed(detected?.line) ?? CORE_LINE;
}
