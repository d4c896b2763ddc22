import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { auditEvents, e2eHost, waitFor } from "../harness/index.ts";

/**
 * Issue 20 §2 on the real `opencode serve`: a repository's governance.yaml with thousands of unknown keys, arriving
 * by a hot reload (a `git pull`), must not stall the host — measured as the host's event-loop delay: sequential
 * requests to OpenCode's own HTTP API (served on the same event loop as the plugin), the slowest one while the
 * plugin reloads. Before the fix 25,000 keys stalled `opencode serve` 12.75 s and wrote one audit line per key,
 * rotating the user's audit history out. Also: a project file cannot shrink the audit log or turn enforcement off.
 */
const keys = (n: number) => Array.from({ length: n }, (_, i) => `unknownkey${i}: 1`).join("\n");
const FILES = {
  "5,000 unknown keys in 64 KB (shape check)": `phase: hostile\n${keys(5_000)}\n`.slice(0, 64 * 1024 - 1),
  "25,000 unknown keys, 250 KB (size bound)": `phase: hostile\n${keys(25_000)}\n`,
};

describe("a hostile governance.yaml cannot stall the host (real opencode serve)", () => {
  let configFile: string;

  const { project, serve } = e2eHost({ respond: () => ({ text: "ok" }) });
  beforeAll(async () => {
    configFile = path.join(project.dir, ".opencode", "governance.yaml");
    // OpenCode loads a directory's plugins on its first request for that directory.
    await waitFor(
      async () => (await serve.http.status()) && auditEvents(project.governanceDir).some((e) => e.type === "plugin_started"),
      "plugin started",
      60_000,
    );
  });

  /** The slowest of sequential API round trips until `done()` holds. */
  async function slowestWhile(done: () => boolean, what: string): Promise<{ max: number; n: number }> {
    let max = 0;
    let n = 0;
    const until = Date.now() + 30_000;
    while (!done()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      const t = performance.now();
      await serve.http.status();
      max = Math.max(max, performance.now() - t);
      n++;
    }
    return { max, n };
  }

  test.each(Object.entries(FILES))("%s: refused at once, the host answers throughout, the audit history stays", { timeout: 120_000 }, async (_name, text) => {
    const before = auditEvents(project.governanceDir);
    const baseline = await slowestWhile(
      (() => {
        const end = Date.now() + 1_500;
        return () => Date.now() > end;
      })(),
      "baseline",
    );
    fs.writeFileSync(configFile, text);
    const reloaded = () =>
      auditEvents(project.governanceDir).length > before.length &&
      auditEvents(project.governanceDir)
        .slice(before.length)
        .some((e) => e.type === "config_problem");
    const during = await slowestWhile(reloaded, "the reload's config_problem");
    await new Promise((r) => setTimeout(r, 300)); // any further lines of the same reload
    const after = auditEvents(project.governanceDir);
    const added = after.slice(before.length).filter((e) => e.type === "config_problem");
    console.log(
      `[config-stall] ${_name}: slowest API round trip ${during.max.toFixed(1)} ms during the reload (${during.n} requests), baseline ${baseline.max.toFixed(1)} ms; ${added.length} config_problem line(s): ${String(added[0]?.message).slice(0, 140)}`,
    );
    expect(during.max).toBeLessThan(Math.max(250, baseline.max * 3));
    expect(added.length).toBeLessThanOrEqual(6);
    expect(String(added[0]?.message)).toMatch(/refused unparsed|bytes, more than/);
    // Nothing earlier rotated out: every line from before is still there, in order.
    expect(after.slice(0, before.length)).toEqual(before);
  });

  test("a project's file cannot shrink the audit log or turn enforcement off", { timeout: 60_000 }, async () => {
    const before = auditEvents(project.governanceDir).length;
    fs.writeFileSync(configFile, "phase: weakened\nenforcement: log-only\naudit:\n  maxBytes: 4096\n");
    // One policy_ceiling line for the load, naming both refusals and the built-in bound that held (issue 30).
    const line = await waitFor(
      () =>
        auditEvents(project.governanceDir)
          .slice(before)
          .find((e) => e.type === "policy_ceiling"),
      "policy_ceiling",
      30_000,
    );
    expect(line.refused).toEqual([
      { path: "enforcement", layer: "project", value: "log-only", ceiling: "enforce", ceilingLayer: "built-in" },
      { path: "audit.maxBytes", layer: "project", value: "4096", ceiling: "1048576", ceilingLayer: "built-in" },
    ]);
  });
});
