import { describe, expect, it } from "vitest";
import { transition } from "../../../governance/session/session-machine.ts";
import { SessionRecord } from "../../../governance/session/session-record.ts";
import { cleanTitle, MAX_TITLE_LENGTH, retitle } from "../../../governance/session/session-title.ts";
import { makeRecord } from "../helpers.ts";

const ID = "ses_titledcccccccccccccccc";
const PARENT = "ses_parentcccccccccccccccc";
const ctx = { sessionId: ID, config: { minIdleMs: 3_600_000, maxIdleMs: 172_800_000 } };

describe("OpenCode's session title, as the record keeps it", () => {
  it("is stored clean, like every record text: one line, no controls, no bidi or invisible characters, secrets redacted", () => {
    expect(cleanTitle("Fix the\nlogin\tbug")).toBe("Fix the login bug");
    expect(cleanTitle("\u001b[31mred\u001b[0m title\u0007")).toBe("red title");
    expect(cleanTitle("abc\u202Edef\u200bghi")).toBe("abcdefghi");
    expect(cleanTitle("deploy with sk-ant-abcdefghijklmnopqrstuvwx")).not.toContain("abcdefghijklmnop");
    expect(cleanTitle("x".repeat(500))!.length).toBeLessThanOrEqual(MAX_TITLE_LENGTH);
  });

  it("an empty, blank or non-text title is no title", () => {
    for (const raw of ["", "   ", "\u200b\u202E", 7, null, undefined, { title: "x" }]) expect(cleanTitle(raw)).toBeNull();
  });

  it("the record schema accepts it and older records without one", () => {
    const record = makeRecord(ID, 1_000);
    expect(SessionRecord.parse({ ...record, title: "Migrate the database" }).title).toBe("Migrate the database");
    const { title: _none, ...older } = record;
    expect(SessionRecord.parse(older).title).toBeUndefined();
  });

  it("session.created names it: the machine's new record starts with the clean title", () => {
    const { next } = transition(
      undefined,
      { type: "created", at: 1_000, parentId: null, agent: null, title: "Explore the auth module\n(@explore subagent)" },
      ctx,
    );
    expect(next?.title).toBe("Explore the auth module (@explore subagent)");
    const untitled = transition(undefined, { type: "created", at: 1_000, parentId: PARENT, agent: "explore" }, ctx).next;
    expect(untitled?.title).toBeUndefined();
  });

  it("a rename changes it and the record's updatedAt; the same title, a blank one or no record change nothing", () => {
    const record = makeRecord(ID, 1_000, { title: "New session - 2026-11-26T09:00:00.000Z" });
    const renamed = retitle(record, "Fix the login bug", 2_000);
    expect(renamed.next).toMatchObject({ title: "Fix the login bug", updatedAt: 2_000 });
    expect(renamed.effects).toEqual([]);
    expect(retitle(renamed.next, "Fix the login bug", 3_000).next).toBe(renamed.next);
    expect(retitle(renamed.next, "  ", 3_000).next).toBe(renamed.next);
    expect(retitle(undefined, "x", 3_000).next).toBeUndefined();
  });
});
