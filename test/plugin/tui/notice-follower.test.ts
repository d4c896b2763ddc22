import { appendFileSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Notice, NoticeFollower, parseNoticeLine } from "../../../plugin/tui/notice-follower.ts";

const line = (data: Record<string, unknown>) => `${JSON.stringify({ at: 1, type: "host_notice", ...data })}\n`;

describe("parseNoticeLine: what an audit line may put on OpenCode 2's TUI", () => {
  test.each([
    [
      "a notice with its session",
      line({ message: "Delegation blocked: a → b", variant: "warning", sessionId: "ses_abc123" }),
      { message: "Delegation blocked: a → b", variant: "warning", sessionId: "ses_abc123" },
    ],
    ["no session: no Open", line({ message: "gap", variant: "error" }), { message: "gap", variant: "error" }],
    ["a session id that is not one is dropped", line({ message: "x", variant: "info", sessionId: "../ses_1" }), { message: "x", variant: "info" }],
    ["control characters removed, a line break kept", line({ message: "a\u001b[31mb\nc\u0007", variant: "info" }), { message: "a[31mb\nc", variant: "info" }],
    ["another event type", `${JSON.stringify({ at: 1, type: "delegation_blocked", message: "x", variant: "info" })}\n`, undefined],
    ["an unknown variant", line({ message: "x", variant: "success" }), undefined],
    ["a message that is not text", line({ message: 3, variant: "info" }), undefined],
    ["not JSON", "{torn", undefined],
  ])("%s", (_what, text, expected) => {
    expect(parseNoticeLine(text.trim())).toEqual(expected);
  });

  test("a long text is cut to one toast", () => {
    expect(parseNoticeLine(line({ message: "x".repeat(5_000), variant: "info" }).trim())?.message).toHaveLength(300);
  });
});

describe("NoticeFollower: new notices only, line by line, across a rotation, never through a symlink", () => {
  let dir: string;
  let file: string;
  let seen: Notice[];
  let follower: NoticeFollower;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "ocg-notices-"));
    file = path.join(dir, "audit.log");
    seen = [];
    follower = new NoticeFollower(file, (n) => seen.push(n));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("what the log held at start is not shown; what is appended is, once; a torn line waits for its end", async () => {
    writeFileSync(file, line({ message: "old", variant: "info" }));
    await follower.start();
    await follower.poll();
    expect(seen).toEqual([]);
    const next = line({ message: "new", variant: "warning", sessionId: "ses_1" });
    appendFileSync(file, next.slice(0, 20));
    await follower.poll();
    expect(seen).toEqual([]);
    appendFileSync(file, next.slice(20));
    await follower.poll();
    await follower.poll();
    expect(seen).toEqual([{ message: "new", variant: "warning", sessionId: "ses_1" }]);
  });

  test("a missing log is an empty one; a rotated log is read from its start", async () => {
    await follower.start();
    appendFileSync(file, line({ message: "first", variant: "info" }));
    await follower.poll();
    renameSync(file, `${file}.1`);
    writeFileSync(file, line({ message: "after rotation", variant: "info" }));
    await follower.poll();
    expect(seen.map((n) => n.message)).toEqual(["first", "after rotation"]);
  });

  test("a symlink in the log's place is not followed", async () => {
    const elsewhere = path.join(dir, "elsewhere.log");
    writeFileSync(elsewhere, "");
    symlinkSync(elsewhere, file);
    await follower.start();
    appendFileSync(elsewhere, line({ message: "planted", variant: "error" }));
    await follower.poll();
    expect(seen).toEqual([]);
  });
});
