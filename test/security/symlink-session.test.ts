import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { auditEvents, createTestProject, e2eModel, runOpencode, type ScriptedModel, type TestProject } from "../harness/index.ts";

/**
 * Issue 8 §1, §4 and §5 in the real `opencode` with the built plugin: a repository that ships
 * `.opencode/governance/audit.log` (or the whole `governance/` folder) as a symlink out of the project gets 0 bytes
 * written outside, and the user's session goes on (exit 0, the model got its tool result and answered). A state
 * folder that cannot be written does not stall the tool call (the time between the model's tool call and its next
 * request is printed next to a writable baseline). A config typo is audited once with its did-you-mean.
 */

function digest(dir: string): string {
  const h = createHash("sha256");
  for (const entry of fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .sort((a, b) => (a.parentPath + a.name).localeCompare(b.parentPath + b.name))) {
    const full = path.join(entry.parentPath, entry.name);
    h.update(full);
    if (entry.isFile()) h.update(fs.readFileSync(full));
  }
  return h.digest("hex");
}

/** ms between the model asking for the tool call and OpenCode coming back with its result (hooks included). */
function toolRoundTrip(model: ScriptedModel, from: number): number {
  const steps = model.requests.slice(from).filter((r) => r.kind === "agent");
  return steps[1]!.receivedAt - (steps[0]!.closedAt ?? steps[0]!.receivedAt);
}

describe("the real opencode with hostile state: nothing written outside, the session goes on", () => {
  const model = e2eModel((req) =>
    req.messages.some((m) => m.role === "tool")
      ? { text: "answer after tool" }
      : { toolCalls: [{ name: "bash", args: { command: "echo ok", description: "x" } }] },
  );

  async function run(project: TestProject): Promise<{ code: number | null; stderr: string; steps: number; roundTripMs: number }> {
    const from = model.requests.length;
    const result = await runOpencode(project, ["hello"]);
    const steps = model.requests.slice(from).filter((r) => r.kind === "agent");
    return { code: result.code, stderr: result.stderr, steps: steps.length, roundTripMs: steps.length >= 2 ? toolRoundTrip(model, from) : NaN };
  }

  for (const planted of ["audit.log", "governance folder"] as const) {
    test(`${planted} as a symlink to a victim outside the project`, async () => {
      const project = createTestProject({ modelUrl: model.url });
      const victim = fs.mkdtempSync(path.join(path.dirname(project.dir), "victim-"));
      try {
        fs.writeFileSync(path.join(victim, "bashrc"), "# the user's shell start-up file\n");
        if (planted === "audit.log") {
          fs.mkdirSync(project.governanceDir, { recursive: true });
          fs.symlinkSync(path.join(victim, "bashrc"), path.join(project.governanceDir, "audit.log"));
        } else {
          fs.mkdirSync(path.dirname(project.governanceDir), { recursive: true });
          fs.rmSync(project.governanceDir, { recursive: true, force: true });
          fs.symlinkSync(victim, project.governanceDir);
        }
        const before = digest(victim);
        const r = await run(project);
        expect(r.code, r.stderr.slice(-1000)).toBe(0);
        expect(r.steps).toBe(2);
        expect(digest(victim)).toBe(before);
        expect(fs.readFileSync(path.join(victim, "bashrc"), "utf8")).toBe("# the user's shell start-up file\n");
        console.log(`[symlink-session] ${planted} → victim: exit ${r.code}, ${r.steps} model steps, tool round trip ${r.roundTripMs} ms, victim unchanged`);
      } finally {
        project.cleanup();
        fs.rmSync(victim, { recursive: true, force: true });
      }
    });
  }

  test("an unwritable state folder does not stall the tool call", async () => {
    const baseline = createTestProject({ modelUrl: model.url });
    const blocked = createTestProject({ modelUrl: model.url });
    let undo: () => void = () => undefined;
    try {
      const ok = await run(baseline);
      expect(ok.code).toBe(0);
      // State from an earlier run, then the folder is made unwritable the way that really fails for this user.
      expect((await run(blocked)).code).toBe(0);
      const root = blocked.governanceDir;
      if (process.getuid?.() === 0) {
        const staging = `${root}.staging`;
        fs.cpSync(root, staging, { recursive: true });
        if (spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", root]).status !== 0)
          return console.log("[symlink-session] cannot mount as root here: skipped");
        fs.cpSync(staging, root, { recursive: true });
        execFileSync("mount", ["-o", "remount,ro", root]);
        undo = () => execFileSync("umount", [root]);
      } else {
        const folders = [
          root,
          ...fs
            .readdirSync(root, { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => path.join(root, e.name)),
        ];
        for (const f of folders) fs.chmodSync(f, 0o555);
        undo = () => folders.forEach((f) => fs.chmodSync(f, 0o755));
      }
      const r = await run(blocked);
      console.log(
        `[symlink-session] tool round trip: writable ${ok.roundTripMs} ms, unwritable state ${r.roundTripMs} ms (a retried lock used to add ~25 000 ms per hook)`,
      );
      expect(r.code, r.stderr.slice(-1000)).toBe(0);
      expect(r.steps).toBe(2);
      // Generous on a shared machine; the failure this guards against is a 25 s lock retry.
      expect(r.roundTripMs).toBeLessThan(ok.roundTripMs + 5_000);
    } finally {
      undo();
      baseline.cleanup();
      blocked.cleanup();
    }
  });

  test("a config typo is audited once, with its did-you-mean, and the rest of the file is in force", async () => {
    const project = createTestProject({ modelUrl: model.url, governanceYaml: "phase: release\ndelegation:\n  maxDepht: 1\n" });
    try {
      const r = await run(project);
      expect(r.code, r.stderr.slice(-1000)).toBe(0);
      const problems = auditEvents(project.governanceDir).filter((e) => e.type === "config_problem");
      expect(problems).toEqual([expect.objectContaining({ line: 3, column: 3, message: expect.stringContaining('did you mean "maxDepth"?'), source: "file" })]);
      expect(model.requests.filter((q) => q.kind === "agent").at(-1)!.system).toContain("release");
    } finally {
      project.cleanup();
    }
  });
});
