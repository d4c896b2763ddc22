import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { missing } from "../harness/system-tools.ts";
import { recordTrust } from "../../governance/storage/record-attestation.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { STOP_HEADINGS, TOOL_OUTPUT_MARKER, USER_GUIDANCE_HEADING } from "../../governance/texts/stop-directives.ts";
import { parseUntrustedBlock } from "../../governance/text-safety/untrusted-text.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { EMPTY_BUDGET } from "../../governance/session/budget-state.ts";
import { startDashboardProcess } from "../cli/dashboard-process.ts";
import { e2eChromium, e2eDashboard } from "../harness/e2e-browser.ts";
import { auditEvents, e2eHost, Gate, type ModelRequest, type Reply, REPO_ROOT, sessionRecord, textOf, toolTexts, waitFor } from "../harness/index.ts";

/** The README's picture is rewritten only when asked (`UPDATE_SCREENSHOTS=1 npm test`); otherwise a temp file. */
const SCREENSHOT = process.env.UPDATE_SCREENSHOTS
  ? path.join(REPO_ROOT, "docs", "images", "dashboard.png")
  : path.join(tmpdir(), `ocg-dashboard-${process.pid}.png`);
const RESUMABLE = "ses_browserresume0000000000001";
const GUIDANCE = "please keep the commits small";
/** The child's task description: OpenCode titles the subagent's session with it (issue 32: the page shows titles). */
const CHILD_TASK = "Read the notes in a loop";
const CHILD_TITLE = `${CHILD_TASK} (@governance-executor subagent)`;
/** Guidance sent together with the stop: the stop wins, and the page says this guidance was dropped and why. */
const LATE_GUIDANCE = "also update the changelog";
/** The coordinator's second delegation, to an agent outside its allow-list in this project's governance.yaml. */
const BLOCKED_AGENT = "governance-planner";
/** Where the coordinator of this walk-through looks for the final page (outside the repository). */
const AFTER_SCREENSHOT = process.env.DASHBOARD_AFTER_SCREENSHOT;

const lastToolText = (req: ModelRequest) => toolTexts(req).at(-1) ?? "";

/**
 * issue 10 §6: the dashboard in a real browser against a real OpenCode session whose subagent is running. The page
 * is opened before the work starts, so every row it shows arrived live (server-sent events), without a reload.
 */
const SKIP = missing("chromium");
describe.skipIf(SKIP !== "")(SKIP || "dashboard in Chromium, live, against a real OpenCode session and subagent", () => {
  const gate = new Gate();
  let step = 0;

  async function respond(req: ModelRequest): Promise<Reply> {
    const first = textOf(req.messages.find((m) => m.role === "user")?.content);
    const tools = toolTexts(req).length;
    if (first.includes("PARENT")) {
      if (tools === 0)
        return { toolCalls: [{ name: "task", args: { description: CHILD_TASK, prompt: "CHILD-LOOP keep reading", subagent_type: "governance-executor" } }] };
      // Its stopped child returned: it tries an agent governance does not let it delegate to.
      if (tools === 1) return { toolCalls: [{ name: "task", args: { description: "Plan the rest", prompt: "PLAN the rest", subagent_type: BLOCKED_AGENT } }] };
      return { text: "parent done" };
    }
    if (first.includes("CHILD-LOOP")) {
      if (tools > 0) await gate.wait();
      step++;
      return { toolCalls: [{ name: "read", args: { filePath: `${project.dir}/notes-${step % 2}.txt` } }] };
    }
    return { text: "ok" };
  }

  // The child loops on purpose until the page stops it: the loop guard (issue 17) is off here.
  const { project, serve, stepsOf } = e2eHost({
    respond,
    agents: true,
    // The coordinator may delegate to the executor only (OpenCode's own permission also allows the planner).
    governanceYaml: [
      "loops:",
      "  enabled: false",
      "agents:",
      "  governance-coordinator:",
      "    role: primary",
      "    mayDelegateTo: [governance-executor]",
      "  governance-executor:",
      "    role: delegating",
      "    mayDelegateTo: [governance-builder]",
      "",
    ].join("\n"),
    files: { "notes-0.txt": "loop-output-even\n", "notes-1.txt": "loop-output-odd\n" },
    beforeServe: async (project) => {
      // An earlier session, interrupted two hours ago: the page lists it as resumable with its command.
      const store = new SessionStore({ projectDir: project.dir, clock: systemClock });
      const twoHoursAgo = Date.now() - 2 * 3600_000;
      await store.update(RESUMABLE, () => ({
        schemaVersion: 2,
        sessionId: RESUMABLE,
        parentId: null,
        rootId: RESUMABLE,
        level: 1,
        depth: 0,
        agent: "governance-coordinator",
        state: "interrupted",
        control: "active",
        createdAt: twoHoursAgo,
        updatedAt: twoHoursAgo,
        lastActivityAt: twoHoursAgo,
        idleAt: null,
        interruptedAt: twoHoursAgo,
        stateBeforeInterrupt: "between_turn",
        lastToolCall: { tool: "bash", callId: "c0", at: twoHoursAgo, summary: "npm test" },
        firstTool: "bash",
        counters: { toolCalls: 3, modelSteps: 4, violations: 0, compactions: 0, resumes: 0 },
        compactionHistory: [],
        recentActions: [],
        children: [],
        todo: null,
        phase: null,
        phaseHistory: [],
        stale: [],
        firstAction: null,
        interruptions: [],
        stop: null,
        stoppedAt: null,
        halt: null,
        resume: null,
        compactedPending: false,
        budget: EMPTY_BUDGET,
        // Written as this user's governance writes it (lists show only attested records: a planted one is not the user's).
        attest: recordTrust(project.env).attest(RESUMABLE),
      }));
    },
  });
  // The user's dashboard runs as the same user as OpenCode (same HOME/XDG dirs): it signs queue directives with the
  // per-user key the plugin checks.
  const dash = e2eDashboard(project);
  const { context, page } = e2eChromium({ viewport: { width: 1280, height: 820 } });
  afterAll(() => gate.release(100));

  test("sees the tree appear live, injects fenced guidance, stops the subagent (L1 on its next tool call), and the list follows", async () => {
    let navigations = 0;
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto(dash.url);
    await page.locator("#live", { hasText: "live" }).waitFor();
    // The resumable session, with the exact command and its resume context.
    const resumable = page.locator(`#resumable li[data-session="${RESUMABLE}"]`);
    await expect.poll(() => resumable.locator("code.command").textContent()).toBe(`opencode -s ${RESUMABLE}`);
    expect(await resumable.locator("pre").textContent()).toContain("Resumed Session");

    // The work starts after the page is open: parent and child rows must arrive without a reload.
    const parent = (await serve.http.createSession()).id;
    await serve.http.promptAsync(parent, "PARENT delegate", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(parent))[0]?.id, "child session", 60_000);
    await waitFor(() => stepsOf(child).length >= 2, "child waiting at its second tool call", 60_000);
    const parentRow = page.locator(`tr[data-session="${parent}"]`);
    const childRow = page.locator(`tr[data-session="${child}"]`);
    await childRow.waitFor({ timeout: 30_000 });
    await parentRow.waitFor();
    // The tree: the child under its parent, indented, with its agent.
    const order = await page.locator("#rows tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session")));
    expect(order.indexOf(parent)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(child)).toBe(order.indexOf(parent) + 1);
    // The title OpenCode gave the subagent is the row's first column (indented under its parent), then its id and agent.
    await expect.poll(() => childRow.locator("td").first().textContent(), { timeout: 30_000 }).toBe(`└─ ${CHILD_TITLE}`);
    expect(await childRow.locator("td").nth(1).textContent()).toBe(child);
    expect(await childRow.locator("td").nth(2).textContent()).toBe("governance-executor");
    await expect.poll(() => childRow.locator("td.tool").textContent(), { timeout: 30_000 }).toMatch(/^read .*notes-/);

    // Guidance typed in the page arrives fenced in the child's next tool result.
    await childRow.locator("input[type=text]").fill(GUIDANCE);
    await childRow.getByRole("button", { name: "Inject" }).click();
    await page.locator("#status.ok", { hasText: "inject requested" }).waitFor();
    // The plugin notices a queued directive through its watcher (≤ 500 ms poll), so a tool call racing the click
    // may still come back plain: step the child until the guidance arrives, at most three tool calls.
    let guided = "";
    for (let i = 0; i < 3 && !guided.includes(GUIDANCE); i++) {
      const before = stepsOf(child).length;
      gate.release();
      guided = lastToolText(await waitFor(() => stepsOf(child)[before], "child step after the inject", 60_000));
    }
    const trace = () =>
      auditEvents(project.governanceDir)
        .filter((e) => e.sessionId === child)
        .map((e) => JSON.stringify(e))
        .join("\n");
    expect(guided, trace()).toContain(USER_GUIDANCE_HEADING);
    // Fenced: the one untrusted-data block between the heading and the tool output holds exactly the guidance.
    // The heading line ends with the session's seal; the fenced guidance follows on the next line.
    const heading = guided.slice(guided.indexOf(USER_GUIDANCE_HEADING)).split("\n")[0]!;
    expect(heading).toMatch(/\[seal:[0-9a-f]{16}\]$/);
    const block = guided.slice(guided.indexOf(USER_GUIDANCE_HEADING) + heading.length, guided.indexOf(TOOL_OUTPUT_MARKER)).trim();
    expect(parseUntrustedBlock(block)?.body, block).toBe(GUIDANCE);
    await expect.poll(() => page.locator("#audit-rows tr", { hasText: "inject_queued" }).count()).toBeGreaterThan(0);

    // More guidance, then Stop (L1, the default), both while the child waits: its next tool result carries the L1
    // directive, and the guidance is dropped — stop wins over inject.
    await childRow.locator("input[type=text]").fill(LATE_GUIDANCE);
    await childRow.getByRole("button", { name: "Inject" }).click();
    await page.locator("#status.ok", { hasText: "inject requested" }).waitFor();
    await childRow.getByRole("button", { name: "Stop" }).click();
    await page.locator("#status.ok", { hasText: "stop begun" }).waitFor();
    await waitFor(() => sessionRecord(project.governanceDir, child)?.control === "stopping", "the plugin took the stop", 30_000);
    // The page follows by itself: the row says stopping, the audit tail shows the request.
    await expect.poll(() => childRow.locator(".word").textContent(), { timeout: 30_000 }).toBe("stopping");
    await expect.poll(() => page.locator("#audit-rows tr", { hasText: "stop_queued" }).count()).toBeGreaterThan(0);
    // The audit view names the session by its title too.
    expect(await page.locator("#audit-rows tr", { hasText: "stop_queued" }).first().locator("td.title").textContent()).toBe(`${CHILD_TITLE}${child}`);
    const base = stepsOf(child).length;
    gate.release();
    const l1 = lastToolText(await waitFor(() => stepsOf(child)[base], "child step after the stop", 60_000));
    expect(l1).toContain(STOP_HEADINGS[1]);
    expect(l1).toContain("stopped from the dashboard");
    expect(l1).toMatch(/loop-output-(even|odd)/);
    expect(l1).not.toContain(LATE_GUIDANCE);
    await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "stop_level_delivered" && e.sessionId === child), "L1 delivered", 30_000);
    // The row: stopping for as long as the stop has been pending (not the child's age), who asked, the dropped guidance.
    const notes = () => childRow.locator(".note").evaluateAll((n) => n.map((x) => `${x.getAttribute("data-kind")}: ${x.textContent}`));
    await expect.poll(notes, { timeout: 30_000 }).toContain("dropped: 1 guidance dropped: stop wins over inject");
    expect((await notes())[0]).toMatch(
      /^stop: stop asked by the user, from the dashboard \(.+\) · “stopped from the dashboard” · L1 delivered, L2 on its next tool result$/,
    );
    const childRecord = sessionRecord(project.governanceDir, child)!;
    const stoppingFor = Number(/^for (\d+)s$/.exec((await childRow.locator(".since").textContent()) ?? "")?.[1]);
    expect(stoppingFor).toBeLessThanOrEqual(Math.ceil((Date.now() - childRecord.stop!.requestedAt) / 1000) + 1);
    expect(stoppingFor).toBeLessThan(Math.floor((Date.now() - childRecord.createdAt) / 1000));

    // Seeing it: the child's budget as a bar (the default runaway guards of a subagent), and its line on the timeline
    // with the guidance and the stop marked where they happened.
    const meter = childRow.locator("td").nth(4).locator('[role="meter"]');
    await expect.poll(() => meter.count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await childRow.locator("td").nth(4).textContent()).toMatch(/own (modelRequests|toolCalls|activeTime) \S+\/(500|1000|2h)/);
    const line = page.locator(`#timeline .line[data-session="${child}"]`);
    await expect.poll(() => line.locator('.mark.stop[data-type="stop_queued"]').count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => line.locator('.mark.guidance[data-type="session_injected"]').count(), { timeout: 30_000 }).toBe(1);
    expect(await page.locator(`#timeline .line[data-session="${parent}"]`).count()).toBe(1);
    expect(await line.locator(".who").textContent()).toMatch(
      /Read the notes in a loop \(@governance-executor subagent\) · governance-executor · \d+ tool calls?$/,
    );
    // The legend names every kind of mark, each in the colour the timeline draws it.
    const legend = page.locator("#legend li");
    expect(await legend.evaluateAll((items) => items.map((i) => i.getAttribute("data-kind")))).toEqual([
      "running",
      "finished",
      "stop",
      "budget",
      "loop",
      "guidance",
      "escape",
      "end",
      "refused",
      "tool",
    ]);
    expect(await page.locator('#legend li[data-kind="stop"]').textContent()).toBe("stop requested, delivered or done");
    // Read in one go inside the page: a live update may replace the timeline's nodes between two separate calls.
    const colour = (selector: string) =>
      page.evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)}); return e ? getComputedStyle(e).backgroundColor : "missing"; })()`);
    expect(await colour('#legend li[data-kind="stop"] .swatch')).toBe(await colour('#timeline .mark.stop[data-type="stop_queued"]'));
    expect(await colour('#legend li[data-kind="guidance"] .swatch')).toBe(await colour("#timeline .mark.guidance"));

    // The child keeps calling tools: L2, then L3 ends it (stopped, aborted by governance, the parent's task returns).
    for (const level of [2, 3]) {
      const at = stepsOf(child).length;
      gate.release();
      await waitFor(() => stepsOf(child)[at], `child step carrying L${level}`, 60_000);
    }
    await waitFor(() => sessionRecord(project.governanceDir, child)?.control === "stopped", "the child stopped by the ladder", 30_000);
    // The coordinator then delegates outside its allow-list: governance blocks it.
    await waitFor(
      () => auditEvents(project.governanceDir).some((e) => e.type === "delegation_blocked" && e.sessionId === parent),
      `the coordinator's delegation to ${BLOCKED_AGENT} blocked\n${auditEvents(project.governanceDir)
        .map((e) => e.type)
        .join(" ")}`,
      60_000,
    );
    // Both trees are finished now: the user ticks "show finished sessions".
    await page.locator("#all").check();
    const parentNotes = () => parentRow.locator(".note").evaluateAll((n) => n.map((x) => `${x.getAttribute("data-kind")}: ${x.textContent}`));
    await expect
      .poll(parentNotes, { timeout: 30_000 })
      .toContain(`blocked: delegation blocked: governance-coordinator → ${BLOCKED_AGENT} · target not in its allow-list`);
    await expect.poll(() => childRow.locator(".word").textContent(), { timeout: 30_000 }).toBe("stopped");
    await expect
      .poll(async () => (await notes())[0], { timeout: 30_000 })
      .toMatch(/^stop: stop asked by the user, from the dashboard \(.+\) · “stopped from the dashboard” · L1→L2→L3 delivered · ended: after L3$/);
    expect(await notes()).toContain("dropped: 1 guidance dropped: stop wins over inject");
    expect(await childRow.locator("td.title .branch").textContent()).toBe("└─ ");
    // Governance's abort after L3 is drawn as part of the stop, never as an Escape; the refusal is on the parent's line.
    await expect.poll(() => line.locator('.mark.stop[data-type="session_stopped"]').count(), { timeout: 30_000 }).toBe(1);
    expect(await line.locator(".mark.escape").count()).toBe(0);
    expect(await page.locator(`#timeline .line[data-session="${parent}"] .mark.refused[data-type="delegation_blocked"]`).count()).toBe(1);
    // The audit log is folded under the sessions.
    expect(await page.locator("#audit-box").getAttribute("open")).toBeNull();

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    expect((await page.screenshot({ path: SCREENSHOT, fullPage: true })).length).toBeGreaterThan(10_000);
    if (AFTER_SCREENSHOT) await page.screenshot({ path: AFTER_SCREENSHOT, fullPage: true });
    expect(navigations).toBe(1);
    expect(errors).toEqual([]);
  });

  test("a project where no governed session has run yet says what to do", async () => {
    // An OpenCode project (a `.opencode/` folder, as after `opencode-governance init`) with no session yet.
    const empty = mkdtempSync(path.join(tmpdir(), "ocg-empty-project-"));
    mkdirSync(path.join(empty, ".opencode"));
    const emptyDash = await startDashboardProcess(empty, [], project.env);
    const emptyPage = await context.newPage();
    try {
      await emptyPage.goto(emptyDash.url);
      await emptyPage.locator("#live", { hasText: "live" }).waitFor();
      expect(await emptyPage.locator("#rows tr.empty").textContent()).toBe("No governed session has run in this project yet — start OpenCode here.");
      expect(await emptyPage.locator("#legend li").count()).toBe(10);
    } finally {
      await emptyPage.close();
      await emptyDash.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
