import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DirectiveInbox } from "../../../plugin/stop/directive-inbox.ts";

const SESSION = "ses_inbox0000000000000000000001";
let dir: string;

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A directive lands the way every producer writes it: a temp file renamed into the session's queue folder. */
function land(queues: string, name: string): void {
  const folder = path.join(queues, SESSION);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(queues, `.${name}.tmp`), "{}");
  fs.renameSync(path.join(queues, `.${name}.tmp`), path.join(folder, name));
}

/** Moves the queue folder's mtime into the past, as time passing would (no sleeping in unit tests). */
function settle(queues: string): void {
  const past = new Date(Date.now() - 10_000);
  fs.utimesSync(path.join(queues, SESSION), past, past);
}

describe("DirectiveInbox", () => {
  it("sees a directive that no watcher reported, and rests once the claimed folder is unchanged", () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "inbox-"));
    const inbox = new DirectiveInbox(dir);
    expect(inbox.has(SESSION)).toBe(false); // no queue folder: nothing to read

    land(dir, "000000000000001-a.json");
    expect(inbox.has(SESSION)).toBe(true);
    expect(inbox.take(SESSION)).toBe(true);
    // Changed within the last few ms: a directive renamed in during the same file-time tick would not move the mtime,
    // so the next tool result looks once more.
    expect(inbox.has(SESSION)).toBe(true);

    settle(dir);
    expect(inbox.take(SESSION)).toBe(true);
    expect(inbox.has(SESSION)).toBe(false); // claimed, unchanged since

    land(dir, "000000000000002-b.json");
    expect(inbox.has(SESSION)).toBe(true);
  });

  it("a mark alone (this process queued something) is enough, and is cleared by take", () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "inbox-"));
    const inbox = new DirectiveInbox(dir);
    inbox.mark(SESSION);
    expect(inbox.has(SESSION)).toBe(true);
    expect(inbox.take(SESSION)).toBe(true);
    expect(inbox.has(SESSION)).toBe(false);
  });
});
