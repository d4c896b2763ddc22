import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../cli/main.ts";
import { thisProcess } from "../../governance/storage/lock-owner.ts";
import { createCliProject, type CliProject } from "./cli-project.ts";

/**
 * `status` always says something about coverage (newcomer walk 3: no coverage line at all while the first session ran,
 * the README listing coverage among what `status` prints): the counts, with "running" and their age while the session
 * runs; a running session not counted yet, and why; or that no session has run.
 */
const ROOT = "ses_cov1root0000000000000000C";
let p: CliProject;
beforeEach(async () => {
  p = await createCliProject();
});
afterEach(() => p.cleanup());

async function coverageLines(): Promise<string[]> {
  let out = "";
  expect(await main(["status", "--dir", p.dir], { out: (s) => (out += `${s}\n`), err: () => undefined })).toBe(0);
  return out.split("\n").filter((l) => l.startsWith("coverage: "));
}

function writeCoverage(at: number, sessionId = ROOT): void {
  const folder = path.join(p.dir, ".opencode", "governance");
  const last = { sessionId, steps: 3, prefixed: 3, noted: 3, tools: 2, gated: 2, children: 1, linked: 1, gaps: [] };
  fs.writeFileSync(path.join(folder, "coverage.json"), JSON.stringify({ schemaVersion: 1, at, host: { line: 1, version: "1.18.33" }, last, gaps: 0 }));
}

describe("status: the coverage line", () => {
  it("no session yet: says so", async () => {
    expect(await coverageLines()).toEqual(["coverage: no session has run in this project yet"]);
  });

  it("a session running, no counts written yet: names it and when they come", async () => {
    await p.put({ sessionId: ROOT, hostedBy: thisProcess() });
    expect(await coverageLines()).toEqual([
      `coverage: session ${ROOT} is running, not counted yet: the plugin writes a session's counts 2 s after its first model step, then every 15 s and when OpenCode exits`,
    ]);
  });

  it("the running session's counts: marked running, with their age; once idle, the last session's line", async () => {
    await p.put({ sessionId: ROOT, hostedBy: thisProcess() });
    writeCoverage(Date.now() - 5_000);
    expect(await coverageLines()).toEqual([
      `coverage: session ${ROOT} (running): prefix on 3/3 steps, 2/2 tool calls gated, 1/1 children linked as of 5 seconds ago`,
    ]);
    await p.put({ sessionId: ROOT, hostedBy: thisProcess(), idleAt: Date.now() });
    expect(await coverageLines()).toEqual([
      `coverage: last session ${ROOT}: prefix on 3/3 steps, 2/2 tool calls gated, 1/1 children linked (in the OpenCode process that last ran it)`,
    ]);
  });

  it("an earlier session's counts and a new one running: both said", async () => {
    const other = "ses_cov2other000000000000000C";
    await p.put({ sessionId: other, hostedBy: thisProcess() });
    writeCoverage(Date.now() - 60_000);
    const lines = await coverageLines();
    expect(lines[0]).toContain(`coverage: last session ${ROOT}: prefix on 3/3 steps`);
    expect(lines[1]).toContain(`coverage: session ${other} is running, not counted yet`);
  });
});
