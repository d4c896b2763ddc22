import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Dashboard, startDashboard } from "../../cli/dashboard-server.ts";
import { readConfig } from "../../cli/read-config.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { DEFAULT_CONFIG } from "../../governance/config/config.ts";
import { decideSpawn } from "../../governance/delegation/spawn-gate.ts";
import type { Effect } from "../../governance/session/effects.ts";
import { transition } from "../../governance/session/session-machine.ts";
import { planDelivery } from "../../governance/stop/delivery-plan.ts";
import { startStop } from "../../governance/stop/stop-ladder.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { type CliProject, createCliProject } from "../cli/cli-project.ts";
import { e2eChromium } from "../harness/e2e-browser.ts";
import { missing } from "../harness/system-tools.ts";

const ROOT = "ses_panelroot0000000000000001";
const CHILD = "ses_panelchild000000000000001";
const GRAND = "ses_panelgrand000000000000001";
const DONE = "ses_paneldone0000000000000001";

/**
 * Seed 000's panel, the parts the live test (dashboard.test.ts) does not look at, in Chromium against the dashboard
 * server over records written as the plugin writes them (no OpenCode needed): the empty state, each running session's
 * elapsed time, the inject box's limit (the config's `inject.maxLength`), a session check's finding on its row, and a
 * closed page releasing its live connection.
 */
const SKIP = missing("chromium");
describe.skipIf(SKIP !== "")(SKIP || "the dashboard panel in Chromium (issue 33)", () => {
  const { context } = e2eChromium();
  let p: CliProject;
  let dash: Dashboard;
  let page: Page;

  beforeEach(async () => {
    p = await createCliProject();
    mkdirSync(path.join(p.dir, ".opencode"), { recursive: true });
    writeFileSync(path.join(p.dir, ".opencode", "governance.yaml"), "inject:\n  maxLength: 40\n");
    const store = new SessionStore({ projectDir: p.dir, clock: systemClock });
    const config = () => readConfig(store.paths.configFile);
    dash = await startDashboard(
      { paths: store.paths, store, audit: new AuditLog({ paths: store.paths, clock: systemClock }), clock: systemClock, by: "dashboard:test" },
      { maxInjectLength: (await config()).config.inject.maxLength, config, watchIntervalMs: 50 },
    );
    page = await context.newPage();
  });
  afterEach(async () => {
    if (!page.isClosed()) await page.close();
    await dash.close();
    await p.cleanup();
  });

  const open = async () => {
    await page.goto(dash.url);
    await page.locator("#live", { hasText: "live" }).waitFor();
  };

  test("no sessions: one row across the whole table says so, with no controls", async () => {
    await open();
    const rows = page.locator("#rows tr");
    await expect.poll(() => rows.first().textContent()).not.toBe("loading…");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute("data-session")).toBeNull();
    const cell = rows.first().locator("td");
    expect(await cell.count()).toBe(1);
    expect(await cell.getAttribute("colspan")).toBe(String(await page.locator("#sessions thead th").count()));
    expect((await cell.textContent())?.trim()).toMatch(/\bno\b.*session/i);
    expect(await page.locator("#rows button").count()).toBe(0);
    // A session arriving replaces the empty state without a reload.
    await p.put({ sessionId: ROOT, agent: "governance-coordinator" });
    await page.locator(`tr[data-session="${ROOT}"]`).waitFor();
    expect(await rows.count()).toBe(1);
  });

  test("a running session's row shows how long it has run, its inject box holds the configured limit, and its checks' findings", async () => {
    const started = Date.now() - 95_000;
    await p.put({ sessionId: ROOT, agent: "governance-coordinator", createdAt: started, updatedAt: started, lastActivityAt: Date.now() });
    await p.put({
      sessionId: CHILD,
      parentId: ROOT,
      rootId: ROOT,
      level: 2,
      depth: 1,
      agent: "governance-builder",
      firstTool: "edit",
      firstAction: { at: Date.now(), tool: "edit", role: "leaf", ok: false },
    });
    await open();
    const row = page.locator(`tr[data-session="${ROOT}"]`);
    await row.waitFor();
    // Elapsed since the record's creation, on the server's clock: 95 s (the page shows seconds below two minutes).
    const state = (await row.locator("td.state").textContent()) ?? ""; // title, session, agent, state
    const elapsed = Number(/running for (\d+)s/.exec(state)?.[1]);
    expect(elapsed, state).toBeGreaterThanOrEqual(95);
    expect(elapsed, state).toBeLessThan(110);
    // The inject box: maxlength from the config (40, not the default 500); typing more keeps 40.
    const box = row.locator("input[type=text]");
    expect(await box.getAttribute("maxlength")).toBe("40");
    await box.pressSequentially("g".repeat(60));
    expect(await box.inputValue()).toBe("g".repeat(40));
    // The builder edited before reading: the row says so.
    const child = page.locator(`tr[data-session="${CHILD}"]`);
    expect(await child.locator("td.state").textContent()).toContain("first action missed: edit first (LEAF)");
  });

  test("the tree with connectors, one state word per session, and on each row its stop's cause, a blocked delegation, dropped guidance", async () => {
    const now = Date.now();
    const audit = new AuditLog({ paths: new SessionStore({ projectDir: p.dir, clock: systemClock }).paths, clock: systemClock });
    // Each line as the plugin's own step writes it (its effects), under the session the step ran for.
    const write = async (sessionId: string, effects: readonly Effect[]) => {
      for (const e of effects) if (e.type === "audit") await audit.append(e.event, { sessionId, ...e.data });
    };
    const root = await p.put({ sessionId: ROOT, agent: "governance-coordinator", title: "Plan the release", createdAt: now - 600_000 });
    // The coordinator tried to hand work to an agent outside its allow-list.
    await write(ROOT, decideSpawn(root, { targetAgent: "governance-builder", config: DEFAULT_CONFIG }).effects);
    // Its executor, five minutes old, asked to stop from the dashboard twelve seconds ago; guidance queued for it lost to the stop.
    const child = await p.put({
      sessionId: CHILD,
      parentId: ROOT,
      rootId: ROOT,
      level: 2,
      depth: 1,
      agent: "governance-executor",
      title: "Run the tests",
      createdAt: now - 300_000,
    });
    const stop = startStop(child, { requestId: "stop_panel", at: now - 12_000, level: 1, reason: "wrong branch", by: "dashboard:alice", deadlineMs: 60_000 });
    await p.put(stop.next);
    await write(CHILD, stop.effects);
    const inject = { kind: "inject" as const, id: "inj_panel", at: now, text: "use the cache", by: "dashboard:alice" };
    // Its next tool result carried L1 and dropped the guidance queued with the stop.
    const delivered = planDelivery(stop.next, { injects: [inject], notes: [], output: "OUT", at: now, maxLength: 500, seal: "seal:0123456789abcdef" });
    await p.put(delivered.next!);
    await write(CHILD, delivered.effects);
    // The executor's own subagent, cut off when its parent was aborted; and a finished sibling.
    const cut = transition(
      await p.put({
        sessionId: GRAND,
        parentId: CHILD,
        rootId: ROOT,
        level: 3,
        depth: 2,
        agent: "governance-builder",
        title: "Read the logs",
        createdAt: now - 200_000,
      }),
      { type: "aborted", at: now - 10_000, cascade: true },
      { config: { minIdleMs: 60_000, maxIdleMs: 172_800_000 }, sessionId: GRAND },
    );
    await p.put(cut.next!);
    await write(GRAND, cut.effects);
    await p.put({
      sessionId: DONE,
      parentId: ROOT,
      rootId: ROOT,
      level: 2,
      depth: 1,
      agent: "governance-validator",
      title: "Check the notes",
      createdAt: now - 100_000,
      control: "completed",
    });
    await open();
    const row = (id: string) => page.locator(`tr[data-session="${id}"]`);
    await row(DONE).waitFor();
    // The tree, whole (its finished members too, the root runs), drawn with connectors in tree order.
    const titles = await page.locator("#rows tr td.title").evaluateAll((cells) => cells.map((c) => c.textContent));
    expect(titles).toEqual(["Plan the release", "├─ Run the tests", "│  └─ Read the logs", "└─ Check the notes"]);
    // One state word per session, the same word the CLI's `sessions` uses (sessionStatus).
    const words = await page.locator("#rows tr .word").evaluateAll((w) => w.map((x) => x.textContent));
    expect(words).toEqual(["running", "stopping", "interrupted", "completed"]);
    // "stopping for" counts from the stop's request (12 s ago), not from the executor's start (5 min ago).
    expect(await row(CHILD).locator(".since").textContent()).toMatch(/^for 1\ds$/);
    const notes = async (id: string) =>
      row(id)
        .locator(".note")
        .evaluateAll((n) => n.map((x) => `${x.getAttribute("data-kind")}: ${x.textContent}`));
    expect(await notes(CHILD)).toEqual([
      "stop: stop asked by the user, from the dashboard (alice) · “wrong branch” · L1 delivered, L2 on its next tool result",
      "dropped: 1 guidance dropped: stop wins over inject",
    ]);
    expect(await notes(ROOT)).toEqual(["blocked: delegation blocked: governance-coordinator → governance-builder · target not in its allow-list"]);
    expect(await notes(GRAND)).toEqual(["interrupted: interrupted: its parent was interrupted"]);
    // The audit log is folded under the sessions; opened, each line says its key facts.
    const box = page.locator("#audit-box");
    expect(await box.getAttribute("open")).toBeNull();
    expect(await page.locator("#audit").isVisible()).toBe(false);
    await box.locator("summary").click();
    await page.locator("#audit").waitFor({ state: "visible" });
    const detail = (type: string) => page.locator("#audit-rows tr", { hasText: type }).first().locator("td").nth(3).textContent();
    expect(await detail("session_stop_requested")).toBe("L1 taken · by the dashboard (alice) · “wrong branch”");
    expect(await detail("inject_dropped")).toBe("1 guidance dropped · stop wins over inject");
    expect(await detail("delegation_blocked")).toBe("governance-coordinator → governance-builder · target not in its allow-list");
    expect(await detail("session_aborted")).toContain("its parent was interrupted");
    // The refused delegation is a mark on the coordinator's timeline line too.
    expect(await page.locator(`#timeline .line[data-session="${ROOT}"] .mark.refused[data-type="delegation_blocked"]`).count()).toBe(1);
  });

  test("closing the page releases its live connection on the server", async () => {
    await open();
    await expect.poll(() => dash.liveConnections()).toBe(1);
    await page.close();
    await expect.poll(() => dash.liveConnections(), { timeout: 5_000 }).toBe(0);
  });
});
