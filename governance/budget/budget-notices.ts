import { BUDGET_KINDS, type BudgetKey } from "../config/budget-kinds.ts";
import { sayAmount } from "../config/budget-units.ts";
import { agentToken, sessionToken } from "../text-safety/text-parts.ts";

/** How a budget's use is said: "8 of 10 tool calls", "$1.62 of $2.00 cost", "24m of 30m active time". */
export function formatUse(key: BudgetKey, used: number, limit: number): string {
  return `${sayAmount(key, used, limit)} of ${sayAmount(key, limit, limit)} ${BUDGET_KINDS[key].label}`;
}

export const BUDGET_NOTICE_HEADING = "⏳ GOVERNANCE BUDGET NOTICE";
export const LOOP_NOTICE_HEADING = "🔁 GOVERNANCE LOOP NOTICE";
const END = "--- END OF GOVERNANCE NOTICE ---";

export type BudgetLine = { key: BudgetKey; used: number; limit: number; scope: "session" | "tree" };

/** The short fenced notice on a session's next tool result when a budget passes its warning threshold. */
export function buildBudgetWarning(lines: readonly BudgetLine[]): string {
  const body = lines.map((l) => {
    const left = Math.max(0, l.limit - l.used);
    const whose = l.scope === "tree" ? "The whole task (you and every subagent of it)" : "You";
    const leftText = formatLeft(l.key, left, l.limit);
    return `- ${whose}: ${formatUse(l.key, l.used, l.limit)} used; ${leftText} left.`;
  });
  return [
    BUDGET_NOTICE_HEADING,
    ...body,
    "At the limit you will be asked to stop. Finish the essential part, avoid new side work, and prepare your summary.",
    END,
  ].join("\n");
}

function formatLeft(key: BudgetKey, left: number, limit: number): string {
  return sayAmount(key, left, limit);
}

/**
 * Told once, on the session's next tool result, when a raise stood a budget stop down: it may go on, and with what.
 * `lines` are the session's (and its tree's) limited budgets after the raise.
 */
export function buildStandDownNotice(lines: readonly BudgetLine[]): string {
  const body = lines.map((l) => {
    const whose = l.scope === "tree" ? "The whole task (you and every subagent of it)" : "You";
    return `- ${whose}: ${formatLeft(l.key, Math.max(0, l.limit - l.used), l.limit)} left of the ${BUDGET_KINDS[l.key].label} budget (${formatUse(l.key, l.used, l.limit)} used).`;
  });
  return [
    BUDGET_NOTICE_HEADING,
    "The user raised your budget, so the stop that governance asked for is withdrawn: you may continue your task.",
    ...body,
    END,
  ].join("\n");
}

/** The stop reason a budget gives (shown in the stop directive, to the parent, in `sessions`). */
export function budgetStopReason(line: BudgetLine, agent: string | null): string {
  const whose = line.scope === "tree" ? "the task tree's budget" : `the budget of ${agentToken(agent)}`;
  return `Budget exceeded: ${formatUse(line.key, line.used, line.limit)} used (${whose}). A user may raise it with \`opencode-governance budget\`.`;
}

export type LoopKind = "repeat" | "ping-pong" | "cycle" | "poll";

/** What the loop notice says happened, in the model's terms. */
function loopWhat(kind: LoopKind, count: number, period: number, tool: string): string {
  switch (kind) {
    case "repeat":
      return `You called \`${agentToken(tool)}\` with the same arguments ${count} times in a row and got the same result each time (paths, descriptions and numbers that only jump about or count your calls aside).`;
    case "poll":
      return `You polled with \`${agentToken(tool)}\` ${count} times, waiting between polls, and the result never changed.`;
    default:
      return `You went through the same ${period} calls in a cycle ${Math.floor(count / Math.max(1, period))} times and got the same results each time.`;
  }
}

export function buildLoopNotice(kind: LoopKind, count: number, tool: string, period = kind === "ping-pong" ? 2 : 1): string {
  const advice =
    kind === "poll"
      ? "What you are waiting for does not seem to move. Check whether it is stuck, or stop and report what blocks you."
      : "This looks like a loop: it is making no progress. Change your approach, or stop and report what blocks you.";
  return [LOOP_NOTICE_HEADING, loopWhat(kind, count, period, tool), advice, END].join("\n");
}

export function loopStopReason(kind: LoopKind, count: number, period = kind === "ping-pong" ? 2 : 1): string {
  switch (kind) {
    case "repeat":
      return `Loop detected: the same tool call with the same result ${count} times in a row.`;
    case "poll":
      return `Loop detected: a poll whose result did not change in ${count} polls.`;
    default:
      return `Loop detected: the same ${period} tool calls in a cycle with unchanged results (${count} calls).`;
  }
}

/** The refusal text of a spawn beyond the concurrency limit: what to do, and which subagents are running. */
export function buildConcurrencyRefusal(input: {
  scope: "parent" | "project";
  limit: number;
  /** How many run in that scope now (the list may show fewer). */
  count: number;
  running: readonly { sessionId: string; agent: string | null }[];
}): string {
  const list = input.running
    .slice(0, 10)
    .map((r) => `${agentToken(r.agent)} (${sessionToken(r.sessionId)})`)
    .join(", ");
  const where = input.scope === "parent" ? `You already have ${input.count} running subagents` : `The project already has ${input.count} running subagents`;
  const key = input.scope === "parent" ? "concurrency.perParent" : "concurrency.perProject";
  const most = input.count === input.limit ? "the most allowed at once" : `and at most ${input.limit} are allowed at once`;
  return [
    `⏸️ SPAWN REFUSED (concurrency limit): ${where}, ${most} (governance.yaml ${key}).`,
    `Wait for one of the running subagents to finish before you start another: ${list || "(none known to this process)"}.`,
    "Then call the task tool again with the same request. Do not work around this limit.",
  ].join("\n");
}
