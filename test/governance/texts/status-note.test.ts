import { describe, expect, it } from "vitest";
import { textTools } from "../../../governance/host/host-lines.ts";
import { buildStatusNote, STATUS_NOTE_HEADING } from "../../../governance/texts/status-note.ts";

describe("buildStatusNote", () => {
  it("is nothing at all when there is nothing to say (no bytes added to the request)", () => {
    expect(buildStatusNote({ todo: null })).toBeUndefined();
    expect(buildStatusNote({ todo: null, orphans: [], resume: "", reminder: undefined })).toBeUndefined();
  });

  it("starts with its heading and says it is not the user speaking", () => {
    const text = buildStatusNote({ todo: { total: 5, open: 2 } })!;
    const [heading, framing] = text.split("\n");
    expect(heading).toBe(STATUS_NOTE_HEADING);
    expect(framing).toMatch(/not a message from the user/);
    expect(text).toContain("**Todos:** 2 open of 5.");
  });

  it("keeps the resume context first and the reminder next, as given, then todos and orphans", () => {
    const text = buildStatusNote({
      resume: "## Resumed Session (opencode-governance)\nidle 2 hours",
      reminder: "## Post-Compaction Context Recovery (opencode-governance)\nMUST MAINTAIN",
      todo: { total: 1, open: 1 },
      orphans: [{ sessionId: "ses_abc123456789", agent: "governance-builder", idleMs: 25 * 60_000 }],
    })!;
    const at = (s: string) => text.indexOf(s);
    expect(at("## Resumed Session")).toBeGreaterThan(at(STATUS_NOTE_HEADING));
    expect(at("## Post-Compaction")).toBeGreaterThan(at("## Resumed Session"));
    expect(at("**Todos:**")).toBeGreaterThan(at("## Post-Compaction"));
    expect(text).toContain("- governance-builder (ses_abc123456789), idle 25 minutes");
  });

  it("caps the orphan list so a noisy state cannot grow it without bound", () => {
    const orphans = Array.from({ length: 8 }, (_, i) => ({ sessionId: `ses_orphan00000${i}`, agent: null, idleMs: 600_000 }));
    const text = buildStatusNote({ todo: null, orphans })!;
    expect(text).toContain("…and 3 more");
    expect(text.length).toBeLessThan(2_000);
  });

  it("names only the tools the host offers: OpenCode 2.0.15 delegates with `subagent` and has no todo tool", () => {
    const firstAction = { at: 1, tool: "read", role: "primary" as const, ok: false };
    const stale = [{ kind: "todo" as const, open: 2, total: 3, toolCalls: 12 }];
    const v1 = buildStatusNote({ todo: null, firstAction, stale, tools: textTools(1) })!;
    expect(v1).toContain("Update the todo list (`todowrite`), then delegate the next step with `task`.");
    expect(v1).toContain("Update it (`todowrite`)");
    const v2 = buildStatusNote({ todo: null, firstAction, stale, tools: textTools(2) })!;
    expect(v2).toContain("your first action is: Delegate the next step with `subagent`.");
    expect(v2).not.toMatch(/todowrite|`task`/);
  });

  it("names the missed first call as the model made it: OpenCode 2's `shell`, where the record keeps the core's `bash`", () => {
    const firstAction = { at: 1, tool: "bash", role: "primary" as const, ok: false };
    expect(buildStatusNote({ todo: null, firstAction, tools: textTools(1) })).toContain("your first call was `bash`;");
    const v2 = buildStatusNote({ todo: null, firstAction, tools: textTools(2) })!;
    expect(v2).toContain("your first call was `shell`;");
    expect(v2).not.toContain("bash");
  });
});
