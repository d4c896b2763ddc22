import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type Dashboard, startDashboard } from "../../cli/dashboard-server.ts";
import { readConfig } from "../../cli/read-config.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { type CliProject, createCliProject } from "../cli/cli-project.ts";
import { CHROMIUM, missing } from "../harness/system-tools.ts";

const ROOT = "ses_panelroot0000000000000001";
const CHILD = "ses_panelchild000000000000001";

/**
 * Seed 000's panel, the parts the live test (dashboard.test.ts) does not look at, in Chromium against the dashboard
 * server over records written as the plugin writes them (no OpenCode needed): the empty state, each running session's
 * elapsed time, the inject box's limit (the config's `inject.maxLength`), a session check's finding on its row, and a
 * closed page releasing its live connection.
 */
const SKIP = missing("chromium");
describe.skipIf(SKIP !== "")(SKIP || "the dashboard panel in Chromium (issue 33)", () => {
  let context: BrowserContext;
  let userDataDir: string;
  let p: CliProject;
  let dash: Dashboard;
  let page: Page;

  beforeAll(async () => {
    userDataDir = mkdtempSync(path.join(tmpdir(), "ocg-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM as string,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });
  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });
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
    const state = (await row.locator("td").nth(4).textContent()) ?? ""; // title, session, agent, depth, state
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
    expect(await child.locator("td").nth(4).textContent()).toContain("first action missed: edit first (LEAF)");
  });

  test("closing the page releases its live connection on the server", async () => {
    await open();
    await expect.poll(() => dash.liveConnections()).toBe(1);
    await page.close();
    await expect.poll(() => dash.liveConnections(), { timeout: 5_000 }).toBe(0);
  });
});
