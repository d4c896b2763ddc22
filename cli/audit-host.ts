import { CORE_LINE, type HostLine, hostLineNamed } from "../governance/host/host-lines.ts";

/**
 * The host line the plugin last started on in this project (its last `host_detected` audit line), or the core's line
 * when none says: what the CLI names tools in (records keep the core's `bash`; OpenCode 2 offers `shell`).
 */
export function auditHostLine(events: readonly { type: string; line?: unknown }[]): HostLine {
  return auditHost(events)?.line ?? CORE_LINE;
}

/** That `host_detected` line's host and version (the dashboard's header), or null when no start said. */
export function auditHost(events: readonly { type: string; line?: unknown; version?: unknown }[]): { line: HostLine; version: string | null } | null {
  const detected = events.findLast((e) => e.type === "host_detected");
  if (!detected) return null;
  return { line: hostLineNamed(detected.line) ?? CORE_LINE, version: typeof detected.version === "string" ? detected.version : null };
}
