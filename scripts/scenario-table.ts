/**
 * `npm run test:scenarios`: the shared scenario table (test/scenarios/governance-scenarios.ts) on both hosts, printed
 * as one table. OpenCode 1: the real binary, through the end-to-end test each row names (run under /tmp/e2e.lock).
 * OpenCode 2: the contract double (test/host-contract/opencode-2-scenarios.test.ts) — a proof of the adapter against
 * the pinned contract, not of the host. `SCENARIOS_V1=skip` runs only the OpenCode 2 column.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../test/harness/paths.ts";
import { SCENARIOS } from "../test/scenarios/governance-scenarios.ts";

type Assertion = { title: string; fullName: string; status: string };
type Report = { testResults: { assertionResults: Assertion[] }[] };

function vitest(args: string[], lock: boolean): Assertion[] {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocg-scen-")), "report.json");
  const cmd = [...(lock ? ["flock", "/tmp/e2e.lock"] : []), "npx", "vitest", "run", ...args, "--reporter=json", `--outputFile=${out}`];
  spawnSync(cmd[0] as string, cmd.slice(1), { cwd: REPO_ROOT, stdio: ["ignore", "ignore", "inherit"], timeout: 1_800_000 });
  if (!fs.existsSync(out)) return [];
  const report = JSON.parse(fs.readFileSync(out, "utf8")) as Report;
  return report.testResults.flatMap((f) => f.assertionResults);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const v2 = vitest(["test/host-contract/opencode-2-scenarios.test.ts"], false);
const v1 =
  process.env.SCENARIOS_V1 === "skip"
    ? []
    : vitest([...new Set(SCENARIOS.map((s) => s.opencode1.file))].concat(["-t", SCENARIOS.map((s) => escape(s.opencode1.test)).join("|")]), true);

/** A row passes on OpenCode 2 only when it passes on every host variant the table runs on (issue 25 item 3). */
function v2Status(id: string): string | undefined {
  const runs = v2.filter((a) => a.title === id);
  if (runs.length === 0) return undefined;
  return runs.find((a) => a.status !== "passed")?.status ?? "passed";
}
const mark = (status: string | undefined) => (status === "passed" ? "pass" : status === undefined ? "not run" : status === "failed" ? "FAIL" : status);
const rows = SCENARIOS.map((s) => [s.id, s.title, mark(v1.find((a) => a.title === s.opencode1.test)?.status), mark(v2Status(s.id))]);
const head = ["scenario", "what", "OpenCode 1 (real binary, e2e)", "OpenCode 2 (contract double, every variant)"];
const table = [head, ...rows];
const widths = head.map((_, i) => Math.max(...table.map((r) => (r[i] ?? "").length)));
for (const [i, r] of table.entries()) {
  console.log(`| ${r.map((c, j) => c.padEnd(widths[j] ?? 0)).join(" | ")} |`);
  if (i === 0) console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
}
console.log("OpenCode 2 column: the adapter against the pinned plugin contract (docs/opencode-2.md), not the OpenCode 2 host.");
process.exitCode = rows.every((r) => r[3] === "pass" && (process.env.SCENARIOS_V1 === "skip" || r[2] === "pass")) ? 0 : 1;
