import type { BudgetKey } from "../config/budget-config.ts";
import { agentToken, sessionToken } from "../text-safety/text-parts.ts";

/** Decimal places a number was written with (0.001 → 3, 2 → 0, 1e-7 → 7); float noise is not a place (0.4 + 0.2 → 1). */
function decimalsOf(n: number): number {
  const text = String(Number(n.toPrecision(12)));
  const exp = /e-(\d+)$/.exec(text);
  if (exp) return Number(exp[1]) + (text.split("e")[0]?.split(".")[1]?.length ?? 0);
  return text.split(".")[1]?.length ?? 0;
}

/**
 * Dollars with the precision the budget was set with, never fewer than cents: a $0.001 limit prints as $0.001 (not
 * $0.00) and its use as $0.000 or $0.001; at most 6 places. `setWith` is the configured limit.
 */
export function formatDollars(amount: number, setWith: number): string {
  const places = Math.min(6, Math.max(2, decimalsOf(setWith)));
  return `$${amount.toFixed(places)}`;
}

/** How a budget's use is said: "8 of 10 tool calls", "$1.62 of $2.00", "24m of 30m active time". */
export function formatUse(key: BudgetKey, used: number, limit: number): string {
  switch (key) {
    case "cost":
      return `${formatDollars(used, limit)} of ${formatDollars(limit, limit)} cost`;
    case "activeTime":
      return `${minutes(used)} of ${minutes(limit)} active time`;
    default:
      return `${Math.round(used)} of ${Math.round(limit)} ${LABEL[key]}`;
  }
}

const LABEL: Record<Exclude<BudgetKey, "cost" | "activeTime">, string> = {
  modelRequests: "model requests",
  toolCalls: "tool calls",
  tokens: "tokens",
  inputTokens: "input tokens",
  outputTokens: "output tokens",
  reasoningTokens: "reasoning tokens",
  cacheReadTokens: "cache-read tokens",
  cacheWriteTokens: "cache-write tokens",
};

function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const m = Math.round(ms / 60_000);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ""}`;
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
  return key === "cost" ? formatDollars(left, limit) : key === "activeTime" ? minutes(left) : String(Math.round(left));
}

/**
 * Told once, on the session's next tool result, when a raise stood a budget stop down: it may go on, and with what.
 * `lines` are the session's (and its tree's) limited budgets after the raise.
 */
export function buildStandDownNotice(lines: readonly BudgetLine[]): string {
  const body = lines.map((l) => {
    const whose = l.scope === "tree" ? "The whole task (you and every subagent of it)" : "You";
    const unit = l.key === "cost" ? "cost" : l.key === "activeTime" ? "active time" : LABEL[l.key];
    return `- ${whose}: ${formatLeft(l.key, Math.max(0, l.limit - l.used), l.limit)} left of the ${unit} budget (${formatUse(l.key, l.used, l.limit)} used).`;
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
