import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { displayDeep, displayText } from "../../governance/texts/display-text.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { startDashboard, type Dashboard } from "../../cli/dashboard-server.ts";
import { createCliProject, type CliProject } from "../cli/cli-project.ts";
import { assertCliBuilt, runCli } from "../cli/run-cli.ts";

/**
 * Issue 20 §4: an agent name with a bidi override (U+202E makes "evil\u202Etxt.exe" read reversed) and other
 * invisible characters is cleaned by ONE filter (governance/texts/display-text.ts) on every surface: `sessions`
 * (text and --json), `log` (text and --json), `status --json` and the dashboard API. Before the change `log`,
 * `sessions --json` and the dashboard API kept U+202E.
 */
const ID = "ses_bidi00000000000000000001";
const AGENT = "gov\u202Eexe.txt\u2066\u200B-agent";
const HIDDEN = /[\u202A-\u202E\u2066-\u2069\u200B\u200E\u200F\u061C]/u;

describe("one output filter on every surface", () => {
  let p: CliProject;
  let dash: Dashboard;
  beforeAll(async () => {
    assertCliBuilt();
    p = await createCliProject();
    await p.put({ sessionId: ID, agent: AGENT });
    const store = new SessionStore({ projectDir: p.dir, clock: systemClock });
    const audit = new AuditLog({ paths: store.paths, clock: systemClock });
    await audit.append("session_created", { sessionId: ID, agent: AGENT });
    dash = await startDashboard({ paths: store.paths, store, audit, clock: systemClock, by: "dashboard:test" });
  });
  afterAll(async () => {
    await dash?.close();
    await p?.cleanup();
  });

  it("the filter itself: bidi, isolates, zero-width out; ZWJ emoji, newlines and plain ASCII kept", () => {
    expect(displayText(AGENT)).toBe("govexe.txt-agent");
    expect(displayText("👩‍💻 dev\nnext")).toBe("👩‍💻 dev\nnext");
    expect(displayDeep({ [`k\u202E`]: [AGENT, 1, null] })).toEqual({ k: ["govexe.txt-agent", 1, null] });
  });

  // `sessions` (text) shows agent names as the model sees them (agentToken: "gov?exe.txt??-agent"); the rest shows them cleaned.
  it.each(["sessions", "sessions --json", "log", "log --json", "status --json"])("%s", async (command) => {
    const r = await runCli([...command.split(" "), "--dir", p.dir], { cwd: p.dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(command === "sessions" ? /gov\?exe\.txt\?\?-agent/ : /govexe\.txt-agent/);
    expect(r.stdout).not.toMatch(HIDDEN);
  });

  it("dashboard API", async () => {
    const res = await fetch(`${new URL(dash.url).origin}/api/sessions`, { headers: { "x-governance-token": dash.token } });
    const body = await res.text();
    expect(body).toContain("govexe.txt-agent");
    expect(body).not.toMatch(HIDDEN);
    expect(body).not.toMatch(/\\u202e/i);
  });
});
