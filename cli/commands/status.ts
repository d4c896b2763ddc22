import { budgetSummary, budgetView } from "../../governance/budget/budget-view.ts";
import { isRunningSession, statusCounts, statusCountsLine } from "../../governance/session/running.ts";
import { splitByTrust } from "../../governance/storage/record-attestation.ts";
import { stateFolderProblems } from "../../governance/storage/state-health.ts";
import { trustOf } from "../../governance/stop/control-requests.ts";
import { checkLabels } from "../../governance/texts/check-notes.ts";
import { plainLine } from "../../governance/text-safety/text-parts.ts";
import { readConfig } from "../read-config.ts";
import { readSpend } from "../spend-view.ts";
import { capUseLine } from "../../governance/budget/spend-notices.ts";
import { confinementView } from "../confinement-view.ts";
import { coverageStatusLines, readCoverage } from "../coverage-view.ts";
import { processGoneOf } from "../process-gone.ts";
import { auditHostLine } from "../audit-host.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";
import { explainCommand } from "./explain.ts";

/** Sessions listed under "checks" at most; the rest are counted. */
const MAX_CHECKS = 20;

/**
 * `status [--json]`: the config and its problems, session counts, budgets in use, the session checks' findings (a
 * missed first action, stale-state warnings: governance/texts/check-notes.ts), the last audit events.
 */
export async function statusCommand(c: CommandContext): Promise<number> {
  if (c.options.explain) return explainCommand(c);
  const config = await readConfig(c.store.paths.configFile);
  const stateProblems = stateFolderProblems(c.store.paths);
  const all = await c.store.list();
  // Counts and budgets are of the records this user's governance wrote; the others are only counted (docs/security.md).
  const { trusted: records, unverified } = splitByTrust(all, trustOf(c.control));
  const audit = await c.audit.read();
  const events = audit.slice(-10);
  const hostLine = auditHostLine(audit); // tools named as that host offers them (`shell` on OpenCode 2)
  const coverage = await readCoverage(c.store.paths.root);
  const active = records.filter((r) => r.control === "active" || r.control === "stopping").length;
  // A record that still says running is a live turn only while its OpenCode process lives (a crash leaves it behind).
  const processGone = await processGoneOf(records);
  const counts = statusCounts(records, processGone);
  const runningRoots = records.filter((r) => r.parentId === null && isRunningSession(r) && !processGone(r)).map((r) => r.sessionId);
  const coverageLines = coverageStatusLines(coverage, runningRoots, records.length, c.control.clock.now());
  // Use against budgets: every running session, and any whose budget ran out (the user may want to raise it).
  const now = c.control.clock.now();
  const budgets = records
    .filter((r) => isRunningSession(r) || r.budget.session.exceeded !== null || r.budget.treeEscalation.exceeded !== null)
    .map((r) => ({ sessionId: r.sessionId, title: r.title ?? null, agent: r.agent, budget: budgetView(r, config.config, now) }));
  const checks = records.map((r) => ({ sessionId: r.sessionId, agent: r.agent, warnings: checkLabels(r, now, hostLine) })).filter((c) => c.warnings.length > 0);
  // A cost budget that cannot work (no prices: tokens used, cost 0) is said, once per session and scope.
  const costUnreported = records.flatMap((r) =>
    (["session", "tree"] as const)
      .filter((scope) => (scope === "session" ? r.budget.session : r.budget.treeEscalation).costUnreported)
      .map((scope) => ({ sessionId: r.sessionId, agent: r.agent, scope })),
  );
  const titleOf = new Map(records.map((r) => [r.sessionId, r.title]));
  // Spend over time (issue 44): the project's today and this week always, the user's where a cap is set.
  const spend = readSpend(c.dir, config.config, now);
  const spendShown = spend.caps.filter((x) => x.cap.startsWith("project.") || Object.keys(x.limits).length > 0);
  const confinement = await confinementView(c.dir, process.env, config.config.confinement === "required");
  if (c.options.json) {
    c.io.json({
      version: JSON_VERSION,
      project: c.dir,
      config: {
        file: c.store.paths.configFile,
        source: config.source,
        problems: config.problems.map((p) => ({ line: p.line ?? null, column: p.column ?? null, message: p.message })),
        warnings: config.warnings.map((p) => ({ line: p.line ?? null, column: p.column ?? null, message: p.message })),
      },
      stateFolder: { problems: stateProblems },
      confinement: { confined: confinement.ok && !confinement.warn, text: confinement.text },
      sessions: { recorded: records.length, running: counts.running, byStatus: counts.byStatus, active, unverified: unverified.length },
      budgets,
      spend: { day: spend.window.day, week: spend.window.week, timeZone: spend.timeZone, caps: spend.caps },
      coverage: coverage ?? null,
      coverageLines: coverageLines.map((l) => l.text),
      checks,
      costUnreported,
      lastEvents: events,
    });
    return 0;
  }
  const problems = config.problems.length ? `, ${config.problems.length} problem(s)` : "";
  c.io.line(["bold", "project: "], c.dir);
  c.io.line(["bold", "config: "], `${c.store.paths.configFile} (${config.source}`, ["red", problems], ")");
  for (const p of config.problems) c.io.line("  ", ["red", `line ${p.line ?? "?"}, column ${p.column ?? "?"}: ${p.message}`]);
  for (const w of config.warnings) c.io.line("  ", ["yellow", `warning: line ${w.line ?? "?"}, column ${w.column ?? "?"}: ${w.message}`]);
  for (const p of stateProblems) c.io.line(["bold", "state folder: "], ["red", p]);
  c.io.line(["bold", "confinement: "], confinement.ok && !confinement.warn ? confinement.text : [confinement.ok ? "yellow" : "red", confinement.text]);
  c.io.line(
    ["bold", "sessions: "],
    statusCountsLine(counts),
    unverified.length > 0
      ? ["yellow", `; ${unverified.length} record(s) not written by your governance (planted, copied in, or an older build's): not counted`]
      : "",
  );
  const limited = budgets.map((b) => ({ ...b, summary: budgetSummary(b.budget) })).filter((b) => b.summary !== "");
  if (limited.length > 0) c.io.line(["bold", "budgets:"]);
  for (const b of limited)
    c.io.line(
      `  ${b.sessionId}${b.title ? ` "${b.title.slice(0, 60)}"` : ""} ${(b.agent ?? "?").slice(0, 60)}: `,
      b.budget.exceeded ? ["red", b.summary] : b.summary,
    );
  c.io.line(["bold", "spend: "], `${spend.window.day}, week ${spend.window.week} (${spend.timeZone})`);
  for (const x of spendShown) {
    const over = Object.entries(x.limits).some(([k, v]) => x.use[k as keyof typeof x.use] >= (v as number));
    c.io.line("  ", over ? ["red", capUseLine(x)] : capUseLine(x));
  }
  for (const line of coverageLines) c.io.line(["bold", "coverage: "], line.bad ? ["red", line.text] : line.text);
  if (checks.length > 0) c.io.line(["bold", "checks:"]);
  for (const k of checks.slice(0, MAX_CHECKS)) c.io.line(`  ${k.sessionId} ${plainLine(k.agent ?? "?", 60)}: `, ["yellow", k.warnings.join("; ")]);
  if (checks.length > MAX_CHECKS) c.io.line(`  …and ${checks.length - MAX_CHECKS} more (status --json lists them all)`);
  for (const u of costUnreported)
    c.io.line(
      "  ",
      ["yellow", `${u.sessionId} ${(u.agent ?? "?").slice(0, 60)}: the ${u.scope === "tree" ? "task tree's " : ""}cost budget cannot work`],
      ": the provider reports no prices (tokens used, cost 0); set prices in the OpenCode config or use a token budget",
    );
  c.io.line(["bold", "last audit events:"]);
  for (const e of events) {
    const title = typeof e.sessionId === "string" ? titleOf.get(e.sessionId) : undefined;
    c.io.line(`  ${new Date(e.at).toISOString()} `, ["cyan", e.type], e.sessionId ? ` ${e.sessionId}` : "", title ? ` "${title.slice(0, 60)}"` : "");
  }
  return 0;
}
