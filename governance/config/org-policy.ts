import { constants } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import type { ConfigProblem } from "./config-schema.ts";
import { DEFAULT_CONFIG } from "./config-schema.ts";
import { LayerSettings } from "./layer-settings.ts";

/**
 * The organisation's policy (issue 30): a managed file outside every project and every user's reach, read-only to
 * the plugin. Its limits are ceilings over the user's file and every project's (policy-merge.ts).
 *
 * Where: {@link DEFAULT_ORG_POLICY_FILE}, or the absolute path in `OPENCODE_GOVERNANCE_POLICY` (for config-management
 * tools and tests). Trusted only when it is a regular file owned by root or by the user running OpenCode (the admin
 * of a single-user machine) and writable by no group and no other user: anyone else who can write it could lift
 * every ceiling.
 *
 * Fails closed: a file that exists but is refused or broken keeps the last good policy of this process; with none
 * (the first start) every limit is held at its default — nothing may be loosened at all — and a problem says so.
 */
export const DEFAULT_ORG_POLICY_FILE = "/etc/opencode-governance/policy.yaml";
export const ORG_POLICY_ENV = "OPENCODE_GOVERNANCE_POLICY";
const MAX_ORG_POLICY_BYTES = 64 * 1024;

export function orgPolicyFile(env: NodeJS.ProcessEnv = process.env): string {
  const own = env[ORG_POLICY_ENV]?.trim();
  return own && path.isAbsolute(own) ? own : DEFAULT_ORG_POLICY_FILE;
}

export type OrgPolicy = {
  file: string;
  /** none: no file (no ceiling); file: in force; last-good: broken, the last good one holds; lockdown: broken at first start. */
  source: "none" | "file" | "last-good" | "lockdown";
  settings: LayerSettings | undefined;
  problems: ConfigProblem[];
};

/** Every limit at its default: the organisation layer while its file is broken and no good one was ever read. */
export const LOCKDOWN: LayerSettings = {
  enforcement: "enforce",
  delegation: { maxDepth: DEFAULT_CONFIG.delegation.maxDepth },
  agents: DEFAULT_CONFIG.agents,
  stop: { ...DEFAULT_CONFIG.stop },
  inject: { ...DEFAULT_CONFIG.inject },
  audit: { ...DEFAULT_CONFIG.audit },
  budgets: { default: { ...DEFAULT_CONFIG.budgets.default }, tree: {} },
  concurrency: { ...DEFAULT_CONFIG.concurrency },
  loops: { ...DEFAULT_CONFIG.loops },
  telemetry: { includeText: false },
};

/** Ownership and mode of the opened file: why it cannot be trusted, or null. */
export function orgFileDistrust(st: { uid: number; mode: number }, uid: number | undefined): string | null {
  if (st.uid !== 0 && st.uid !== uid) return `is owned by uid ${st.uid}, not by root or by you (uid ${uid ?? "?"})`;
  if ((st.mode & 0o022) !== 0) return `is writable by its group or by others (mode ${(st.mode & 0o777).toString(8)}); chmod go-w it`;
  return null;
}

async function readTrusted(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error("is not a regular file");
    const distrust = orgFileDistrust(st, process.getuid?.());
    if (distrust) throw new Error(distrust);
    if (st.size > MAX_ORG_POLICY_BYTES) throw new Error(`is ${st.size} bytes, more than the ${MAX_ORG_POLICY_BYTES} allowed`);
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

export async function loadOrgPolicy(env: NodeJS.ProcessEnv = process.env, lastGood?: LayerSettings): Promise<OrgPolicy> {
  const file = orgPolicyFile(env);
  const refuse = (why: string): OrgPolicy => {
    const held = lastGood
      ? "the last good organisation policy stays in force"
      : "NO LIMIT MAY BE LOOSENED: every limit is held at its default until it is fixed";
    return {
      file,
      source: lastGood ? "last-good" : "lockdown",
      settings: lastGood ?? LOCKDOWN,
      problems: [{ message: `organisation policy ${file} ${why}; ${held}`, line: null, column: null, path: "" }],
    };
  };
  let text: string;
  try {
    text = await readTrusted(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { file, source: "none", settings: undefined, problems: [] };
    return refuse((error as Error).message.replace(`${file}: `, ""));
  }
  try {
    const { parseYamlData } = await import("./config-parse.ts");
    const parsed = LayerSettings.safeParse(parseYamlData(text) ?? {});
    if (parsed.success) return { file, source: "file", settings: parsed.data, problems: [] };
    const issue = parsed.error.issues[0]!;
    return refuse(`is invalid at ${issue.path.join(".") || "the top level"}: ${issue.message}`);
  } catch (error) {
    return refuse(`is not valid YAML: ${(error as Error).message}`);
  }
}
