import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestStop, type ControlContext } from "../../../governance/stop/control-requests.ts";
import { claimAll } from "../../../governance/stop/directive-queue.ts";
import { AuditLog } from "../../../governance/storage/audit-log.ts";
import { governancePaths } from "../../../governance/storage/governance-paths.ts";
import { SessionStore } from "../../../governance/storage/session-store.ts";
import { createFakeClock } from "../../../governance/time/clock.ts";
import { makeRecord } from "../helpers.ts";

const RUN = "ses_runningcccccccccccccccc";
let root: string;
let ctx: ControlContext;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "gov-requests-"));
  process.env.XDG_STATE_HOME = join(root, "state");
  const project = join(root, "project");
  mkdirSync(project);
  const clock = createFakeClock(1_000);
  const store = new SessionStore({ projectDir: project, clock });
  await store.update(RUN, () => makeRecord(RUN, 1_000, { control: "active" }));
  const paths = governancePaths(project);
  ctx = { paths, store, audit: new AuditLog({ paths, clock }), clock, by: "cli" };
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("requestStop stores the reason clean (issue 8 §6)", () => {
  it("no escape sequences, BEL or invisible characters, secrets redacted, one line", async () => {
    const res = await requestStop(ctx, RUN, { level: 1, reason: "\u001b[2Jstop\u0007 now\u202E\nBearer abcdefghijklmnopqrstu" });
    expect(res.ok).toBe(true);
    const [d] = await claimAll(ctx.paths, RUN);
    expect(d?.kind === "stop" && d.reason).toBe("stop now Bearer [redacted]");
  });
});
