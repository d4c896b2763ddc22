import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { SessionStore } from "../../../governance/session/session-store.ts";
import { formatOwner, thisProcess } from "../../../governance/storage/lock-owner.ts";
import { recordTrust } from "../../../governance/storage/record-attestation.ts";
import { enqueue, pendingCount } from "../../../governance/stop/directive-queue.ts";
import { requestStop, type ControlContext } from "../../../governance/stop/control-requests.ts";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { MAINTENANCE_MS } from "../../../plugin/sessions/maintenance.ts";
import { events, type PluginFixture, T0, pluginFixtureEach } from "../fixture.ts";

const PARENT = "ses_crashparent000000000000001";
const CHILD = "ses_crashchild0000000000000001";
const STOPPING = "ses_crashstopping000000000001";
const MINUTE = 60_000;

/** The pid of a process that ran and is gone (what a crashed OpenCode leaves in its records and locks). */
function deadPid(): number {
  const r = spawnSync("true");
  return r.pid!;
}

let f: PluginFixture;
pluginFixtureEach((made) => (f = made));

/** What a process killed with -9 leaves on disk: its sessions running or stopping, hosted by a pid now gone. */
async function leaveCrashedSessions(pid: number) {
  const store = new SessionStore({ projectDir: f.dir, clock: f.clock });
  const hostedBy = { host: thisProcess().host, pid, start: null };
  // As the plugin writes them: attested with this user's key, so readers take them as this user's own.
  const trust = recordTrust();
  const base = {
    schemaVersion: 2 as const,
    rootId: PARENT,
    agent: "x",
    state: "between_turn" as const,
    createdAt: T0,
    updatedAt: T0,
    lastActivityAt: T0,
    hostedBy,
  };
  const attest = (id: string) => ({ attest: trust.attest(id) ?? null });
  const link = (id: string) => ({ sessionId: id, agent: "x", createdAt: T0, closedAt: null, outcome: "running" as const });
  await store.update(
    PARENT,
    () =>
      ({
        ...base,
        ...attest(PARENT),
        sessionId: PARENT,
        parentId: null,
        level: 1,
        depth: 0,
        control: "active",
        children: [link(CHILD), link(STOPPING)],
      }) as never,
  );
  await store.update(CHILD, () => ({ ...base, ...attest(CHILD), sessionId: CHILD, parentId: PARENT, level: 2, depth: 1, control: "active" }) as never);
  const stop = { requestId: "r1", requestedAt: T0, reason: "enough", requestedBy: "cli", nextLevel: 2, delivered: [1], deadlineAt: T0 + 5_000 };
  await store.update(
    STOPPING,
    () => ({ ...base, ...attest(STOPPING), sessionId: STOPPING, parentId: PARENT, level: 2, depth: 1, control: "stopping", stop }) as never,
  );
  await enqueue(f.rt.ctx.paths, STOPPING, { kind: "stop", id: "r2", at: T0, level: 3, reason: "again", by: "cli" });
  // A lock of a session nobody touches again (its record was being written when the process died).
  const lock = path.join(f.rt.ctx.paths.sessions, "ses_nobodytouchesit0000000001.json.lock");
  fs.mkdirSync(lock);
  fs.writeFileSync(path.join(lock, "owner"), formatOwner({ host: thisProcess().host, pid, start: null }));
}

describe("crash recovery (issue 21 item 5)", () => {
  test("sessions of a dead process are ended orphaned at the next sweep, a pending stop included; links, queues and locks cleaned", async () => {
    await leaveCrashedSessions(deadPid());
    const report = await f.rt.maintenance.sweep();
    expect(report).toMatchObject({ recovered: 3, locks: 1 });
    for (const id of [PARENT, CHILD, STOPPING]) expect(f.onDisk(id)).toMatchObject({ control: "orphaned", end: { how: "orphaned" } });
    expect(f.onDisk(STOPPING).end.detail).toMatch(/host process \d+ ended/);
    expect(f.onDisk(PARENT).children.map((c: { outcome: string }) => c.outcome)).toEqual(["orphaned", "orphaned"]);
    expect(await pendingCount(f.rt.ctx.paths, STOPPING)).toBe(0);
    expect(fs.existsSync(path.join(f.rt.ctx.paths.queues, STOPPING))).toBe(false);
    expect(fs.readdirSync(f.rt.ctx.paths.sessions).filter((n) => n.includes(".lock"))).toEqual([]);
    expect((await f.audit("session_ended")).map((e) => [e.sessionId, e.wasStopping])).toEqual(
      expect.arrayContaining([
        [STOPPING, true],
        [CHILD, false],
      ]),
    );
  });

  test("a live host's sessions are left alone", async () => {
    await leaveCrashedSessions(process.pid);
    const report = await f.rt.maintenance.sweep();
    expect(report).toMatchObject({ recovered: 0, locks: 0 });
    expect(f.onDisk(STOPPING).control).toBe("stopping");
  });

  // Fail closed (docs/decisions/0040, 0041): a record's hostedBy may be a lie, so the stop is queued all the same — only a
  // live process that hosts the id takes it, and the CLI waits for that acknowledgement — with the record's claim named.
  test("a new stop for a session whose process died, says its record, is queued all the same and says what the record claims", async () => {
    await leaveCrashedSessions(deadPid());
    const ctx: ControlContext = {
      paths: f.rt.ctx.paths,
      store: new SessionStore({ projectDir: f.dir, clock: f.clock }),
      clock: f.clock,
      audit: f.rt.ctx.audit,
      by: "test",
    };
    const result = await requestStop(ctx, CHILD);
    expect(result).toMatchObject({ ok: true, sessionIds: [CHILD] });
    expect(JSON.stringify(result)).toMatch(/process \d+ is gone, says its record; sent all the same/);
  });

  test("the sweep runs on a timer, not only at start: a crash after start is cleaned within a minute", async () => {
    await f.rt.maintenance.settled();
    await leaveCrashedSessions(deadPid());
    await f.timers.advance(MAINTENANCE_MS);
    await f.rt.maintenance.settled();
    expect(f.onDisk(CHILD).control).toBe("orphaned");
  });

  test("a session orphaned by a crash that runs again here (resumed) is active again", async () => {
    await leaveCrashedSessions(deadPid());
    await f.rt.maintenance.sweep();
    await onEvent(f.rt, events.idle(PARENT));
    expect(f.onDisk(PARENT)).toMatchObject({ control: "active", end: null, hostedBy: { pid: process.pid } });
  });

  test("a dead process's session whose first activity here comes before any sweep is ended orphaned first, then resumed as cut off by a crash", async () => {
    // OpenCode 2 loads the plugin on the prompt that continues the session: the start sweep is behind, not before it.
    await f.rt.maintenance.settled();
    await leaveCrashedSessions(deadPid());
    await onEvent(f.rt, events.idle(PARENT));
    expect(await f.audit("session_resumed")).toEqual([expect.objectContaining({ sessionId: PARENT, cutOffByCrash: true, interrupted: true })]);
    expect(f.onDisk(PARENT)).toMatchObject({ control: "active", end: null, hostedBy: { pid: process.pid } });
  });

  test("children of this process get the orphan check periodically (a quick restart < 10 min is caught later)", async () => {
    await onEvent(f.rt, events.created(PARENT));
    await onEvent(f.rt, events.created(CHILD, { parentID: PARENT }));
    // The child's record names no host (an older build): only the 10-minute rule can find it.
    const store = new SessionStore({ projectDir: f.dir, clock: f.clock });
    await store.update(CHILD, (r) => (r ? { ...r, hostedBy: null } : r));
    await f.timers.advance(11 * MINUTE);
    await f.rt.maintenance.settled();
    expect(f.onDisk(CHILD).control).toBe("orphaned");
    expect(f.rt.tracker.orphanNotes(PARENT).map((n) => n.sessionId)).toEqual([CHILD]);
    await onEvent(f.rt, events.idle(PARENT));
    expect(f.rt.tracker.orphanNotes(PARENT)).toEqual([]);
  });
});
