import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { STOP_HEADINGS } from "../../governance/texts/stop-directives.ts";
import { auditEvents, e2eHost, firstUser, type ModelRequest, projectCli, type Reply, sessionRecord, toolTexts, waitFor } from "../harness/index.ts";

/**
 * Issue 41 §3 on the real `opencode serve`: a process that writes files as the user (a repository's `npm test`, a
 * helper an agent runs) rewrites governance's records while the session runs. Nothing here depends on a sandbox: the
 * test itself writes the files, as such a process would. The OpenCode process hosting the session is the authority —
 * the bad file is set aside (`quarantine/`), the record restored from memory, `record_tampered` audited — and the
 * session stays limited (its budget) and stoppable (L1 → L2 → L3, a stop by id).
 */
const CAPPED = `---
description: A subagent with a small tool-call budget, for the test.
mode: subagent
---
You do small tasks.
`;
const YAML = "budgets:\n  agents:\n    capped: { toolCalls: 4 }\n";
const USER_YAML = "budgets:\n  agents:\n    usercapped: { toolCalls: 4 }\nguard:\n  rootSessions: true\n";

const parentOf = (text: string): string => /delegated by [^(]*\(session (ses_\w+)\)/.exec(text)?.[1] ?? "ses_unknown";
const bash = (command: string): Reply => ({ toolCalls: [{ name: "bash", args: { command, description: "run" } }] });

/** A pid no process has: a child that has exited and been reaped. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", ""]);
  return r.pid ?? 999_999;
}

describe("a record made undecodable, moved to another host or turned back is restored by its host (real opencode serve)", () => {
  const { model, project, serve, stepsOf } = e2eHost({
    respond,
    extraAgents: { capped: CAPPED, usercapped: CAPPED },
    governanceYaml: YAML,
    // The user's own ceilings: a cap only this file sets, and the guard over root sessions' tools.
    beforeServe: () => {
      fs.mkdirSync(path.dirname(userFile()), { recursive: true });
      fs.writeFileSync(userFile(), USER_YAML);
    },
  });
  const cli: Record<string, { code: number; stdout: string; stderr: string }> = {};
  let wiper: ChildProcess | undefined;
  const wiped: { code: number; stdout: string; stderr: string }[] = [];

  /** Rewrites a record as a foreign process would: plain write, no lock. */
  function rewrite(id: string, change: (r: Record<string, any>) => void): void {
    const file = path.join(project.governanceDir, "sessions", `${id}.json`);
    const r = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, any>;
    change(r);
    fs.writeFileSync(file, JSON.stringify(r));
  }

  async function childScript(req: ModelRequest, first: string, n: number): Promise<Reply> {
    const self = req.sessionId ?? "ses_unknown";
    const parent = parentOf(first);
    if (first.includes("UNDECODABLE")) {
      if (n === 1) {
        rewrite(self, (r) => {
          r.depth = "deep";
          r.counters.toolCalls = 0;
        });
        rewrite(parent, (r) => {
          r.schemaVersion = 3;
        });
      }
      if (n === 3) {
        // Once the first rewrite was restored (the next write, at most a second later), the second one.
        await waitFor(() => sessionRecord(project.governanceDir, self)?.depth === 1, "the child's record restored", 15_000);
        rewrite(self, (r) => (r.schemaVersion = 3));
      }
      return n < 14 ? bash(`echo call ${n}`) : { text: "undecodable done" };
    }
    if (first.includes("HOST-MOVED")) {
      if (n === 1) {
        cli.moved = await projectCli(project, ["stop", self, "--reason", "the user stops it"]);
        await waitFor(() => sessionRecord(project.governanceDir, self)?.control === "stopping", "stopping");
        rewrite(self, (r) => {
          r.hostedBy = { ...r.hostedBy, pid: 1 };
          r.control = "active";
          r.stop = null;
        });
      }
      return n < 8 ? bash(`echo work ${n}`) : { text: "moved done" };
    }
    if (first.includes("HOST-DEAD")) {
      if (n === 1) {
        rewrite(self, (r) => (r.hostedBy = { ...r.hostedBy, pid: deadPid() }));
        cli.dead = await projectCli(project, ["stop", self, "--level", "2", "--reason", "the user stops it"]);
      }
      return n < 8 ? bash(`echo work ${n}`) : { text: "dead done" };
    }
    if (first.includes("CEILINGS")) {
      if (n === 1) await changeUserFile(null);
      if (n === 2) await changeUserFile("guard:\n  rootSessions: false\n");
      return n < 14 ? bash(`echo call ${n}`) : { text: "ceilings done" };
    }
    if (first.includes("QUEUE-WIPER")) {
      if (n === 0) wiper = startWiper(self);
      if (n >= 1 && n <= 3) wiped.push(await projectCli(project, ["stop", self, "--level", String(n), "--reason", "the user stops it"]));
      return n < 6 ? bash(`echo work ${n}`) : { text: "wiper done" };
    }
    return { text: "ok" };
  }

  /** The user's ceilings file removed (`null`) or rewritten mid-run; returns once the plugin has reloaded its config. */
  async function changeUserFile(text: string | null): Promise<void> {
    const since = Date.now();
    if (text === null) fs.rmSync(userFile());
    else fs.writeFileSync(userFile(), text);
    const reloads = ["config_loaded", "ceiling_kept", "config_problem"];
    await waitFor(() => auditEvents(project.governanceDir).some((e) => reloads.includes(e.type) && e.at >= since), "the config reloaded", 15_000);
  }
  const userFile = () => path.join(project.env.XDG_CONFIG_HOME!, "opencode", "governance.yaml");

  /** A helper that deletes its session's queue files the moment they appear (and every 2 ms). */
  function startWiper(id: string): ChildProcess {
    const dir = path.join(project.governanceDir, "queues", id);
    fs.mkdirSync(dir, { recursive: true });
    const script =
      'const fs=require("fs"),d=process.argv[1];const w=()=>{for(const f of fs.readdirSync(d))if(f.endsWith(".json"))try{fs.unlinkSync(d+"/"+f)}catch{}};fs.watch(d,w);setInterval(w,2);';
    return spawn(process.execPath, ["-e", script, dir], { stdio: "ignore" });
  }

  async function respond(req: ModelRequest): Promise<Reply> {
    const first = firstUser(req);
    const n = toolTexts(req).length;
    if (first.includes("delegated by")) return childScript(req, first, n);
    const task = (prompt: string, agent = "general") => ({ name: "task", args: { description: "work", prompt, subagent_type: agent } });
    const marker = /PARENT-(\S+)/.exec(first)?.[1];
    const agent = marker === "UNDECODABLE" ? "capped" : marker === "CEILINGS" ? "usercapped" : "general";
    // After its child, the CEILINGS root tries to change governance's state folder: the user's root guard must still
    // refuse it (a read passes inside the sandbox, decision 0053; a change is refused early).
    if (marker === "CEILINGS" && n === 1) return bash("rm -rf .opencode/governance/sessions");
    if (marker) return n === 0 ? { toolCalls: [task(marker, agent)] } : { text: "parent finished" };
    return { text: "ok" };
  }

  afterAll(() => wiper?.kill());

  const childOf = (parent: string, marker: string) =>
    model.requests.find((r) => r.kind === "agent" && r.sessionId !== parent && firstUser(r).includes(marker))?.sessionId ?? "";
  const tamperedOf = (id: string) => auditEvents(project.governanceDir).filter((e) => e.type === "record_tampered" && e.sessionId === id);
  const quarantined = (id: string) =>
    fs.readdirSync(path.join(project.governanceDir, "quarantine")).filter((f) => f.startsWith(`${id}.json.`) && !f.endsWith(".reason.json"));

  test("a schema-invalid field, then schemaVersion 3, on the child; schemaVersion 3 on its parent: the budget still stops the child, both records come back", async () => {
    const parent = await serve.http.run("PARENT-UNDECODABLE", { timeoutMs: 90_000 });
    const child = childOf(parent, "UNDECODABLE");
    const results = toolTexts(stepsOf(child).at(-1)!);
    console.log(`[fail-closed] undecodable: ${results.length} tool calls; tampered ${JSON.stringify(tamperedOf(child).map((e) => e.reason))}`);
    expect(auditEvents(project.governanceDir).some((e) => e.type === "budget_exceeded" && e.sessionId === child)).toBe(true);
    expect(results.join("\n")).toContain(STOP_HEADINGS[1]);
    // 4 calls, then the ladder (L1, L2, the call L3 refuses): never the 14 the rewrites would have bought.
    expect(results.length).toBeLessThanOrEqual(9);
    expect(sessionRecord(project.governanceDir, child)).toMatchObject({ schemaVersion: expect.any(Number), control: "stopped", depth: 1 });
    expect(sessionRecord(project.governanceDir, parent)?.schemaVersion).not.toBe(3);
    for (const id of [child, parent]) expect(tamperedOf(id).map((e) => e.reason)).toContain("unreadable");
    // Nothing lost: each bad file is kept aside with its reason.
    expect(quarantined(child).length).toBeGreaterThanOrEqual(2);
    expect(quarantined(parent).length).toBeGreaterThanOrEqual(1);
    const listed = await projectCli(project, ["sessions", "--all", "--json"]);
    expect(listed.stdout).toContain(child);
    expect(listed.stdout).toContain(parent);
  }, 120_000);

  test("hostedBy moved to pid 1 (and the stop lifted) after the user's L1: L2 and L3 still come, the record names its real host", async () => {
    const parent = await serve.http.run("PARENT-HOST-MOVED", { timeoutMs: 90_000 });
    const child = childOf(parent, "HOST-MOVED");
    const results = toolTexts(stepsOf(child).at(-1)!).join("\n");
    const record = sessionRecord(project.governanceDir, child)!;
    console.log(`[fail-closed] moved: control ${record.control}, delivered ${JSON.stringify(record.stop?.delivered)}; cli ${cli.moved?.stdout.trim()}`);
    expect(results).toContain(STOP_HEADINGS[2]);
    expect(record.control).toBe("stopped");
    expect(record.stop?.reason).toBe("the user stops it");
    expect(record.hostedBy?.pid).not.toBe(1);
    expect(tamperedOf(child).map((e) => e.reason)).toContain("host_rewritten");
  }, 120_000);

  test("hostedBy moved to a dead pid: the user's stop by id still reaches the session its live process hosts", async () => {
    const parent = await serve.http.run("PARENT-HOST-DEAD", { timeoutMs: 90_000 });
    const child = childOf(parent, "HOST-DEAD");
    const results = toolTexts(stepsOf(child).at(-1)!).join("\n");
    console.log(`[fail-closed] dead: cli ${cli.dead?.code} ${cli.dead?.stdout.trim()} ${cli.dead?.stderr.trim()}`);
    expect(cli.dead?.code, cli.dead?.stderr).toBe(0);
    expect(cli.dead?.stdout).toMatch(/stop begun \(level 2\)/);
    expect(results).toContain(STOP_HEADINGS[2]);
    expect(sessionRecord(project.governanceDir, child)).toMatchObject({ control: "stopped" });
  }, 120_000);

  test('a helper that deletes its own queue files: every stop says whether OpenCode took it — never "stop requested" for one that vanished', async () => {
    const parent = await serve.http.run("PARENT-QUEUE-WIPER", { timeoutMs: 90_000 });
    wiper?.kill();
    const child = childOf(parent, "QUEUE-WIPER");
    const audit = auditEvents(project.governanceDir);
    const requests = audit.filter((e) => e.type === "stop_queued" && e.sessionId === child).map((e) => String(e.requestId));
    const taken = (id: string) => audit.some((e) => e.requestId === id || (Array.isArray(e.requestIds) && e.requestIds.includes(id)));
    console.log(`[fail-closed] wiper: ${wiped.map((r) => `${r.code} ${(r.stdout + r.stderr).trim().slice(0, 120)}`).join(" | ")}`);
    expect(wiped).toHaveLength(3);
    expect(requests).toHaveLength(3);
    for (const [i, r] of wiped.entries()) {
      expect(r.stdout + r.stderr).not.toContain("stop requested");
      if (r.code === 0) {
        expect(taken(requests[i]!), `stop ${i + 1} said taken`).toBe(true);
        expect(r.stdout).toMatch(/stop (begun|raised to|already under way)/);
      } else expect(r.stderr).toMatch(/not taken yet by OpenCode \(pid \d+\)/);
    }
  }, 120_000);

  test("the user's ceilings file deleted, then rewritten with rootSessions: false, mid-run: its cap and its root guard hold in this process", async () => {
    const parent = await serve.http.run("PARENT-CEILINGS", { timeoutMs: 120_000 });
    const child = childOf(parent, "CEILINGS");
    const results = toolTexts(stepsOf(child).at(-1)!);
    const audit = auditEvents(project.governanceDir);
    const kept = audit.filter((e) => e.type === "ceiling_kept" && e.layer === "user").map((e) => e.reason);
    const rootLs = toolTexts(stepsOf(parent).at(-1)!).at(-1) ?? "";
    console.log(`[fail-closed] ceilings: ${results.length} child calls; kept ${JSON.stringify(kept)}; root: ${rootLs.slice(-300)}`);
    expect(audit.some((e) => e.type === "budget_exceeded" && e.sessionId === child)).toBe(true);
    expect(results.join("\n")).toContain(STOP_HEADINGS[1]);
    expect(results.length).toBeLessThanOrEqual(9);
    expect(kept).toEqual(expect.arrayContaining(["missing", "loosened"]));
    // The stopped child's note may ride on the same result, before the refusal.
    expect(rootLs).toMatch(/(^|\n)Refused by governance: this command would change governance's state folder/);
  }, 150_000);
});
