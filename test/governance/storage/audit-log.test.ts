import { existsSync } from "node:fs";
import { appendFile, mkdir, readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { AuditEventType, AuditLog } from "../../../governance/storage/audit-log.ts";
import { createFakeClock, systemClock } from "../../../governance/time/clock.ts";
import { governancePaths } from "../../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../../governance/storage/quarantine.ts";
import { sid, startWorker, tempDirEach, goTogether, expectCleanExits } from "../helpers.ts";

describe("AuditLog", () => {
  let dir: string;
  tempDirEach((d) => (dir = d), { worker: true });

  it("appends one JSON line per event, at and type first, and reads them back", async () => {
    const clock = createFakeClock(1_000);
    const paths = governancePaths(dir);
    const log = new AuditLog({ paths, clock });
    expect(await log.read()).toEqual([]);
    expect(await log.append("session_created", { sessionId: sid("audit001"), agent: "build" })).toEqual({ ok: true });
    clock.advance(5);
    await log.append("session_stop_requested", { sessionId: sid("audit001"), level: 1, at: 0, type: "forged" });
    const text = await readFile(paths.auditLog, "utf8");
    expect(text.split("\n")[0]).toBe(`{"at":1000,"type":"session_created","sessionId":"${sid("audit001")}","agent":"build"}`);
    expect(await log.read()).toEqual([
      { at: 1_000, type: "session_created", sessionId: sid("audit001"), agent: "build" },
      { at: 1_005, type: "session_stop_requested", sessionId: sid("audit001"), level: 1 },
    ]);
    expect(await readFile(`${paths.root}/.gitignore`, "utf8")).toContain("*");
  });

  it("lists the governance event types", () => {
    for (const type of ["plugin_started", "stop_queued", "session_aborted", "session_injected", "stop_escalated", "stop_level_delivered", "hook_error"]) {
      expect(AuditEventType.options).toContain(type);
    }
  });

  it("skips a torn last line, and a torn fragment cannot swallow the next event", async () => {
    const paths = governancePaths(dir);
    const log = new AuditLog({ paths, clock: createFakeClock(10) });
    await log.append("plugin_started", {});
    await appendFile(paths.auditLog, '{"at":11,"type":"session_cre');
    expect((await log.read()).map((e) => e.type)).toEqual(["plugin_started"]);
    await log.append("session_created", { sessionId: sid("afterTorn"), nested: { at: 1, inner: true } });
    await appendFile(paths.auditLog, "\u0000\u0000\u0000\n");
    expect((await log.read()).map((e) => e.type)).toEqual(["plugin_started", "session_created"]);
  });

  it("never throws: I/O errors and unserializable data come back as values and are reported", async () => {
    const paths = governancePaths(dir);
    const problems: StoreProblem[] = [];
    const log = new AuditLog({ paths, clock: systemClock, onProblem: (p) => problems.push(p) });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect((await log.append("hook_error", circular)).ok).toBe(false);
    expect((await log.append("hook_error", { big: 1n })).ok).toBe(false);
    expect((await log.append("hook_error", { text: "x".repeat(70_000) })).ok).toBe(false);
    await mkdir(paths.auditLog, { recursive: true });
    const result = await log.append("hook_error", { message: "boom" });
    expect(result.ok).toBe(false);
    expect(problems).toHaveLength(4);
    const throwingReporter = new AuditLog({
      paths,
      clock: systemClock,
      onProblem: () => {
        throw new Error("x");
      },
    });
    expect((await throwingReporter.append("hook_error", {})).ok).toBe(false);
  });

  it("rotates past maxBytes and keeps exactly `keep` old files", async () => {
    const paths = governancePaths(dir);
    const log = new AuditLog({ paths, clock: systemClock, maxBytes: 2_000, keep: 3 });
    for (let seq = 0; seq < 200; seq++) {
      expect(await log.append("state_transition", { seq, padding: "y".repeat(80) })).toEqual({ ok: true });
    }
    const files = (await readdir(paths.root)).filter((n) => n.startsWith("audit.log")).sort();
    expect(files).toEqual(["audit.log", "audit.log.1", "audit.log.2", "audit.log.3"]);
    expect(existsSync(`${paths.auditLog}.4`)).toBe(false);
    const all = await log.read({ includeRotated: true });
    const seqs = all.map((e) => e.seq as number);
    // The newest events survive, contiguous: rotation drops only whole files beyond `keep`.
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => 200 - seqs.length + i));
    for (const rotated of log.rotatedFiles()) expect((await readFile(rotated)).length).toBeGreaterThan(2_000);
    expect((await log.read()).every((e) => typeof e.seq === "number")).toBe(true);
  });

  it("4 processes appending at once: every line parses and none is lost (also across rotations)", async () => {
    const paths = governancePaths(dir);
    const perWorker = 250;
    const settings = { maxBytes: 60_000, keep: 1_000 };
    const workers = await Promise.all(
      ["w0", "w1", "w2", "w3"].map((worker) => startWorker("audit", { projectDir: dir, sessionId: sid("audit002"), worker, count: perWorker, ...settings })),
    );
    await goTogether(workers);
    await expectCleanExits(workers);

    const log = new AuditLog({ paths, clock: systemClock, ...settings });
    // The very last append may have rotated audit.log away; then no current file exists.
    const files = [...log.rotatedFiles(), paths.auditLog].filter((f) => existsSync(f));
    expect(files.length).toBeGreaterThan(5);
    let lines = 0;
    for (const file of files) {
      for (const line of (await readFile(file, "utf8")).split("\n").filter(Boolean)) {
        expect(() => JSON.parse(line), line.slice(0, 120)).not.toThrow();
        lines++;
      }
    }
    expect(lines).toBe(4 * perWorker);
    const events = await log.read({ includeRotated: true });
    expect(events).toHaveLength(4 * perWorker);
    for (const worker of ["w0", "w1", "w2", "w3"]) {
      const seqs = events
        .filter((e) => e.worker === worker)
        .map((e) => e.seq as number)
        .sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: perWorker }, (_, i) => i));
    }
  });
});
