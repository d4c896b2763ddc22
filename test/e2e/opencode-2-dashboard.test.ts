/**
 * The scenario table's dashboard row on the real OpenCode 2.0.15 (issue 40): `opencode-governance dashboard` against a
 * V2 project, open in headless Chromium while a root delegates to a child through `subagent`. The page shows the tree
 * (the child under its root, each with its state word), and a Stop pressed on the child's row reaches the child on
 * 2.0.15: its next tool result carries the L1 directive, and the row names the stop's cause. The same row on
 * OpenCode 1: test/browser/dashboard.test.ts. The header names the host the plugin started on, and the tool column
 * names the child's tool as 2.0.15 offers it (`shell`: records keep the core's `bash`).
 */
import { afterAll, describe, expect, test } from "vitest";
import { ORIGINAL_TOOL_OUTPUT_MARKER, STOP_HEADINGS } from "../../governance/texts/stop-directives.ts";
import { e2eChromium, e2eDashboard } from "../harness/e2e-browser.ts";
import { missing } from "../harness/system-tools.ts";
import { auditEvents, e2eHost2, firstUser, Gate, lastOf, type ModelRequest, onOpencode2, type Reply, sessionRecord, waitFor } from "../harness/index.ts";

const gate = new Gate();

/** The root hands over to the executor once; the child runs `shell` step after step, each held until the test lets it. */
async function respond(req: ModelRequest): Promise<Reply> {
  const first = firstUser(req);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  const last = lastOf(req, "tool") ?? "";
  if (first.includes("CHILD-LOOP")) {
    if (last.includes("SESSION STOP") || last.includes("SESSION TERMINATED")) return { text: "stopped as asked" };
    if (tools > 0) await gate.wait();
    return tools < 20 ? { toolCalls: [{ name: "shell", args: { command: `echo step-${tools}`, description: "step" } }] } : { text: "never stopped" };
  }
  if (first.includes("ROOT"))
    return tools === 0
      ? { toolCalls: [{ name: "subagent", args: { agent: "governance-executor", description: "loop", prompt: "CHILD-LOOP keep going" } }] }
      : { text: "root done" };
  return { text: "ok" };
}

const SKIP = missing("chromium");
onOpencode2("OpenCode 2, real host: the dashboard in Chromium", (host) => {
  describe.skipIf(SKIP !== "")(SKIP || "OpenCode 2.0.15, real host: the dashboard in Chromium, its tree and a Stop on the child", () => {
    const { project, serve, stepsOf } = e2eHost2(host, { respond, agents: true, governanceYaml: ["loops:", "  enabled: false", ""].join("\n") });
    // Same HOME/XDG dirs as the server: the dashboard signs the stop with the per-user key the plugin checks.
    const dash = e2eDashboard(project);
    const { page } = e2eChromium({ viewport: { width: 1280, height: 820 } });
    afterAll(() => gate.releaseAll());

    test("the tree arrives live with state words; Stop on the child's row reaches it on its next tool result; the row names the cause", async () => {
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(dash.url);
      await page.locator("#live", { hasText: "live" }).waitFor();

      const root = (await serve.api.createSession({ agent: "governance-coordinator" })).id;
      await serve.api.prompt(root, "ROOT delegate");
      const child = await waitFor(async () => (await serve.api.children(root))[0]?.id, "the child session", 30_000);
      await waitFor(() => stepsOf(child).length >= 2, "the child held at its second step", 30_000);

      const rootRow = page.locator(`tr[data-session="${root}"]`);
      const childRow = page.locator(`tr[data-session="${child}"]`);
      await childRow.waitFor({ timeout: 20_000 });
      await rootRow.waitFor();
      const order = await page.locator("#rows tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session")));
      expect(order.indexOf(child)).toBe(order.indexOf(root) + 1);
      expect(await childRow.locator("td.title .branch").textContent()).toBe("└─ ");
      expect(await childRow.locator("td").nth(2).textContent()).toBe("governance-executor");
      await expect.poll(() => childRow.locator(".word").textContent(), { timeout: 20_000 }).toMatch(/^(running|waiting|in tool|thinking)$/);
      await expect.poll(() => rootRow.locator(".word").textContent(), { timeout: 20_000 }).toMatch(/\S/);
      // The tool column names the tool as 2.0.15 offers it; the header, the host.
      await expect.poll(() => page.locator("#host").textContent(), { timeout: 20_000 }).toBe(`on OpenCode ${host.version}`);
      await expect.poll(() => childRow.locator("td.tool").textContent(), { timeout: 20_000 }).toMatch(/^shell\b/);

      await childRow.getByRole("button", { name: "Stop" }).click();
      await page.locator("#status.ok", { hasText: "stop begun" }).waitFor({ timeout: 20_000 });
      await waitFor(() => sessionRecord(project.governanceDir, child)?.control === "stopping", "the plugin took the stop", 20_000);
      await expect.poll(() => childRow.locator(".word").textContent(), { timeout: 20_000 }).toBe("stopping");

      const before = stepsOf(child).length;
      gate.release();
      const next = lastOf(await waitFor(() => stepsOf(child)[before], "the child's step after the stop", 30_000), "tool") ?? "";
      expect(next).toContain(STOP_HEADINGS[1]);
      expect(next).toContain("stopped from the dashboard");
      // On the tool's own result: the executor's permissions deny `shell` (agents/governance-executor.md), so that result
      // is 2.0.15's refusal, and the directive rides on it.
      expect(next).toMatch(new RegExp(`${ORIGINAL_TOOL_OUTPUT_MARKER}(\n|\\\\n)Permission denied: shell`));
      await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "stop_level_delivered" && e.sessionId === child), "L1 delivered", 20_000);
      const notes = () => childRow.locator(".note").evaluateAll((n) => n.map((x) => `${x.getAttribute("data-kind")}: ${x.textContent}`));
      await expect
        .poll(async () => (await notes())[0], { timeout: 20_000 })
        .toMatch(/^stop: stop asked by the user, from the dashboard \(.+\) · “stopped from the dashboard” · L1 delivered/);
      // The child answers as told: its turn ends, governance marks it stopped, and the page (finished rows shown) follows.
      await waitFor(() => sessionRecord(project.governanceDir, child)?.control === "stopped", "the child stopped", 30_000);
      await page.locator("#all").check();
      await expect.poll(() => childRow.locator(".word").textContent(), { timeout: 20_000 }).toBe("stopped");
      expect(errors).toEqual([]);
    });
  });
});
