import type { CoverageMissing } from "../session/governance-coverage.ts";
import type { HostLine } from "../host/host-lines.ts";

const WHAT: Record<Exclude<CoverageMissing, "sandbox">, string> = {
  prefix: "the governance prefix",
  status_note: "the status note",
  tool_gate: "the tool gate",
  child_link: "child links",
};

/** The host a gap was found on (the same shape as plugin/runtime's HostInfo). */
export type NoticeHost = { line: HostLine; version: string | null };

/**
 * The one notice a `governance_gap` gives the user (a toast on OpenCode 1, a `host_notice` the TUI entry shows on
 * OpenCode 2): what is missing, on which host, and the command that says more.
 */
export function coverageNotice(missing: CoverageMissing, host: NoticeHost): string {
  const on = `OpenCode ${host.line}${host.version ? ` ${host.version}` : ""}`;
  if (missing === "sandbox")
    return `An agent shell command ran outside governance's sandbox (${on} did not pass it through its shell hook); later commands are confined another way. Run \`opencode-governance doctor\`.`;
  return `Governance is not reaching this session (${WHAT[missing]} missing on ${on}): run \`opencode-governance doctor\`.`;
}
