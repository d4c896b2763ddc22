import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { auditEvents, createTestProject, e2eModel, runOpencode } from "../harness/index.ts";

const PREFIX = "## Governance Context (opencode-governance)";

/** A hand-edited config with a mistake on line 3 (a string where a number belongs). */
const BROKEN_YAML = "language:\n  communication: Français\ndelegation:\n  maxDepth: three\n";

describe("bad input never breaks the user's OpenCode session", () => {
  const model = e2eModel((req) =>
    req.messages.some((m) => m.role === "tool") ? { text: "done" } : { toolCalls: [{ name: "bash", args: { command: "echo ok", description: "x" } }] },
  );

  test("a hand-editing mistake in governance.yaml is reported with line and column; the session runs governed on the defaults", async () => {
    const project = createTestProject({ modelUrl: model.url, governanceYaml: BROKEN_YAML });
    try {
      const from = model.requests.length;
      const run = await runOpencode(project, ["hello"]);
      expect(run.code, run.stderr.slice(-1000)).toBe(0);
      const steps = model.requests.slice(from).filter((r) => r.kind === "agent");
      expect(steps.length).toBe(2);
      for (const s of steps) expect(s.system).toContain(PREFIX);
      const problem = auditEvents(project.governanceDir).find((e) => e.type === "config_problem");
      expect(problem).toMatchObject({ line: 4, source: "defaults" });
      expect(Number(problem!.column)).toBeGreaterThan(0);
      // The user's file is left as they wrote it.
      expect(fs.readFileSync(path.join(project.dir, ".opencode", "governance.yaml"), "utf8")).toBe(BROKEN_YAML);
    } finally {
      project.cleanup();
    }
  });

  test("corrupt and hostile files in the state folder are set aside, reported, and the session goes on", async () => {
    const project = createTestProject({ modelUrl: model.url });
    try {
      const sessions = path.join(project.governanceDir, "sessions");
      fs.mkdirSync(sessions, { recursive: true });
      fs.writeFileSync(path.join(sessions, "ses_corruptrecord000000000001.json"), '\0\0\0{"schemaVersion":1');
      fs.writeFileSync(
        path.join(sessions, "ses_futurerecord0000000000001.json"),
        JSON.stringify({ schemaVersion: 99, sessionId: "ses_futurerecord0000000000001" }),
      );
      fs.mkdirSync(path.join(project.governanceDir, "queues", "ses_corruptrecord000000000001"), { recursive: true });
      const run = await runOpencode(project, ["hello"]);
      expect(run.code, run.stderr.slice(-1000)).toBe(0);
      const quarantined = fs.readdirSync(path.join(project.governanceDir, "quarantine"));
      expect(quarantined.some((f) => f.includes("ses_corruptrecord"))).toBe(true);
      // A newer build's record is reported but left in place: an older plugin never pulls a newer one's records away.
      expect(quarantined.some((f) => f.includes("ses_futurerecord"))).toBe(false);
      expect(fs.existsSync(path.join(sessions, "ses_futurerecord0000000000001.json"))).toBe(true);
      expect(auditEvents(project.governanceDir).filter((e) => e.type === "store_problem").length).toBeGreaterThanOrEqual(2);
      expect(auditEvents(project.governanceDir).filter((e) => e.type === "hook_error")).toEqual([]);
    } finally {
      project.cleanup();
    }
  });
});
