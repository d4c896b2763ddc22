import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HooksConfig } from "../../../governance/config/hooks-config.ts";
import { UserHooks } from "../../../plugin/runtime/user-hooks.ts";
import { systemTimers } from "../../../plugin/runtime/timers.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-user-hooks-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function runner(hooks: unknown) {
  const recorded: { type: string; data: Record<string, unknown> }[] = [];
  const errors: unknown[] = [];
  const config = HooksConfig.parse(hooks);
  const h = new UserHooks({
    hooks: () => config,
    directory: dir,
    now: () => Date.now(),
    timers: systemTimers,
    record: (type, data) => recorded.push({ type, data }),
    session: (id) => (id === "ses_1" ? { agent: "builder", parentId: "ses_root" } : undefined),
    reportError: (_w, e) => errors.push(e),
  });
  return { h, recorded, errors };
}

describe("the user's hooks, run for real (/bin/sh, a local HTTP server)", () => {
  it("a command gets the event as JSON on stdin, one per event, in order; fire() returns before anything runs", async () => {
    const out = path.join(dir, "events.jsonl");
    const { h, recorded } = runner({ session_stopped: { command: `cat >> '${out}'; echo >> '${out}'` } });
    const began = performance.now();
    h.fire("session_stopped", { sessionId: "ses_1", how: "ladder" });
    h.fire("session_stopped", { sessionId: "ses_2", how: "compliance" });
    h.fire("budget_warning", { sessionId: "ses_3" });
    expect(performance.now() - began).toBeLessThan(20);
    expect(fs.existsSync(out)).toBe(false);
    await h.settled();
    const lines = fs
      .readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.event, l.sessionId, l.fields.how, l.fields.agent, l.fields.parentId])).toEqual([
      ["session_stopped", "ses_1", "ladder", "builder", "ses_root"],
      ["session_stopped", "ses_2", "compliance", undefined, undefined],
    ]);
    expect(recorded).toEqual([]);
    expect(h.size()).toBe(0);
  });

  it("a failing command and a hanging one (killed at its timeout, with what it started) are audited hook_failed", async () => {
    const marker = path.join(dir, "survived");
    const { h, recorded } = runner({
      session_stopped: [{ command: "exit 3" }, { command: `(sleep 2; touch '${marker}') & sleep 30`, timeout: "300ms" }],
    });
    const began = Date.now();
    h.fire("session_stopped", { sessionId: "ses_1" });
    await h.settled();
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(recorded.map((r) => [r.type, r.data.action, r.data.why, r.data.exitCode])).toEqual(
      expect.arrayContaining([
        ["hook_failed", 0, "exit", 3],
        ["hook_failed", 1, "timeout", undefined],
      ]),
    );
    await new Promise((r) => setTimeout(r, 2_300));
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("a webhook gets the event POSTed as JSON; an error status and an unreachable URL are audited, the URL never", async () => {
    const bodies: string[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        bodies.push(`${req.method} ${req.url} ${req.headers["content-type"]} ${body}`);
        res.statusCode = req.url === "/fail" ? 500 : 200;
        res.end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const { h, recorded } = runner({
      budget_exceeded: [{ url: `http://127.0.0.1:${port}/hook/SECRET` }, { url: `http://127.0.0.1:${port}/fail` }, { url: "http://127.0.0.1:1/x" }],
    });
    h.fire("budget_exceeded", { sessionId: "ses_9", key: "cost" });
    await h.settled();
    server.close();
    const hook = bodies.find((b) => b.startsWith("POST /hook/SECRET application/json "));
    expect(JSON.parse(hook!.split(" ").slice(3).join(" "))).toMatchObject({ event: "budget_exceeded", sessionId: "ses_9", fields: { key: "cost" } });
    expect(recorded.map((r) => [r.data.action, r.data.why, r.data.status])).toEqual(
      expect.arrayContaining([
        [1, "http", 500],
        [2, "network", undefined],
      ]),
    );
    expect(JSON.stringify(recorded)).not.toContain("SECRET");
  });
});
