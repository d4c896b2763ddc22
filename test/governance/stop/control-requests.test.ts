import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderTree, requestInject, requestStop, type ControlContext } from "../../../governance/stop/control-requests.ts";
import { sessionStatus } from "../../../governance/session/running.ts";
import { claimAll } from "../../../governance/stop/directive-queue.ts";
import { type ControlProject, controlProject, makeRecord } from "../helpers.ts";

const RUN = "ses_runningcccccccccccccccc";
const STOPPING = "ses_stoppingccccccccccccccc";
const IDLE_ROOT = "ses_idlerootccccccccccccccc";
const DELETED = "ses_deletedcccccccccccccccc";
let project: ControlProject;
let ctx: ControlContext;

beforeAll(async () => {
  project = controlProject("gov-requests-", 1_000);
  ({ ctx } = project);
  const { store, attested } = project;
  await store.update(RUN, () => attested(RUN, 1_000, { control: "active" }));
  const stop = {
    requestId: "s1",
    requestedAt: 900,
    reason: "enough",
    requestedBy: "cli",
    nextLevel: 1 as const,
    delivered: [],
    deadlineAt: 6_000,
    abortAttempts: 0,
    parentNotified: false,
    quietMs: 5_000,
    capAt: 60_000,
  };
  await store.update(STOPPING, () => attested(STOPPING, 1_000, { control: "stopping", stop }));
  await store.update(IDLE_ROOT, () => attested(IDLE_ROOT, 1_000, { control: "active", idleAt: 1_000, lastActivityAt: 1_000 }));
  await store.update(DELETED, () => attested(DELETED, 1_000, { control: "completed", end: { at: 1_000, how: "deleted", detail: null } }));
  for (let i = 0; i < 3; i++) {
    const id = `ses_planted${String(i).padStart(16, "0")}`;
    await store.update(id, () => makeRecord(id, 1_000, { control: "active", agent: "general" }));
  }
});
afterAll(() => project.remove());

describe("requestStop stores the reason clean (issue 8 §6)", () => {
  it("no escape sequences, BEL or invisible characters, secrets redacted, one line", async () => {
    const res = await requestStop(ctx, RUN, { level: 1, reason: "\u001b[2Jstop\u0007 now\u202E\nBearer abcdefghijklmnopqrstu" });
    expect(res.ok).toBe(true);
    const [d] = await claimAll(ctx.paths, RUN);
    expect(d?.kind === "stop" && d.reason).toBe("stop now Bearer [redacted]");
  });
});

describe("what stop and inject answer is true (issue 21 item 8)", () => {
  it("guidance for a session being stopped is refused with why, not queued to be dropped", async () => {
    const res = await requestInject(ctx, STOPPING, "keep going");
    expect(res).toEqual({ ok: false, reason: expect.stringMatching(/guidance refused: session ses_stopping\w+ is being stopped \("enough"\)/) });
    expect(await claimAll(ctx.paths, STOPPING)).toEqual([]);
  });
  it("guidance made only of invisible characters is refused like an empty one", async () => {
    const res = await requestInject(ctx, RUN, "\u{1D159}\u{1BCA0}\u200b");
    expect(res.ok).toBe(false);
  });
  it("an idle root (waiting for its user) is not running: stop and inject say so; the default tree leaves it out", async () => {
    const stop = await requestStop(ctx, IDLE_ROOT);
    expect(stop).toEqual({ ok: false, reason: expect.stringMatching(/is not running: it is idle, waiting for its user's next prompt/) });
    expect((await requestInject(ctx, IDLE_ROOT, "hello")).ok).toBe(false);
    const records = await ctx.store.list();
    expect(renderTree(records, { now: 2_000 }).join("\n")).not.toContain(IDLE_ROOT);
    expect(renderTree(records, { now: 2_000, all: true }).find((l) => l.includes(IDLE_ROOT))).toContain("depth 0  idle  last:");
  });
  it("a deleted session says it was deleted", async () => {
    expect(await requestInject(ctx, DELETED, "hello")).toEqual({ ok: false, reason: `session ${DELETED} is not running: it was deleted` });
    expect(sessionStatus((await ctx.store.read(DELETED))!)).toBe("deleted");
  });
});

describe("planted records (issue 20 §3)", () => {
  const PLANTED = "ses_planted0000000000000000";
  it("a record without this user's attestation is never stopped or guided, by id or by agent name", async () => {
    expect(await requestStop(ctx, PLANTED)).toEqual({ ok: false, reason: expect.stringMatching(/not one this user's governance recorded/) });
    expect(await requestStop(ctx, "general")).toEqual({ ok: false, reason: 'no running session of agent "general" or with "general" in its title' });
    expect(await claimAll(ctx.paths, PLANTED)).toEqual([]);
  });
  it("the tree lists only the user's sessions and counts the rest", async () => {
    const lines = renderTree(await ctx.store.list(), { now: 2_000, all: true, trust: ctx.trust! });
    expect(lines.join("\n")).not.toContain("ses_planted");
    expect(lines.at(-1)).toMatch(/^\(3 records in the state folder not written by this user's governance/);
  });
});
