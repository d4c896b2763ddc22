import type { PeriodKey } from "../config/budget-config.ts";
import { formatDollars, sayAmount } from "../config/budget-units.ts";
import { BUDGET_NOTICE_HEADING, formatUse } from "./budget-notices.ts";

/** A cap over time: whose spend (the project's, the user's across projects) over which period. */
export type CapName = "project.daily" | "project.weekly" | "user.daily" | "user.weekly";
/** One cap's figure: a key, what was used of it in the cap's window, and the (raised) limit. */
export type CapLine = { cap: CapName; key: PeriodKey; used: number; limit: number };

const CAP_LABEL: Record<CapName, string> = {
  "project.daily": "the project's daily cap",
  "project.weekly": "the project's weekly cap",
  "user.daily": "the user's daily cap (all projects)",
  "user.weekly": "the user's weekly cap (all projects)",
};

export function capLabel(cap: CapName): string {
  return CAP_LABEL[cap];
}

/** How to raise a cap, as the CLI takes it: `opencode-governance budget --project --add cost=5` (`--week` for a week's). */
export function capRaiseCommand(line: Pick<CapLine, "cap" | "key">): string {
  const [scope, period] = line.cap.split(".");
  return `opencode-governance budget --${scope}${period === "weekly" ? " --week" : ""} --add ${line.key}=…`;
}

const END = "--- END OF GOVERNANCE NOTICE ---";

/** The notice on the acting session's next tool result when a cap passes `warnAt`. */
export function buildCapWarning(lines: readonly CapLine[]): string {
  const body = lines.map((l) => {
    const left = Math.max(0, l.limit - l.used);
    const leftText = sayAmount(l.key, left, l.limit);
    return `- ${capLabel(l.cap)}: ${formatUse(l.key, l.used, l.limit)} used; ${leftText} left.`;
  });
  return [
    BUDGET_NOTICE_HEADING,
    ...body,
    "At the cap, governance stops the running subagents. Finish the essential part, avoid new side work, and prepare your summary.",
    END,
  ].join("\n");
}

/** The stop reason a spent cap gives a subagent (the directive, the parent's note, `sessions`). */
export function capStopReason(line: CapLine): string {
  return `Budget exceeded: ${formatUse(line.key, line.used, line.limit)} used (${capLabel(line.cap)}). A user may raise it with \`${capRaiseCommand(line)}\`.`;
}

/**
 * What a root session is told on every step while a cap is spent (the status note): its subagents are stopped, so it
 * should not delegate, and the user decides whether to raise the cap.
 */
export function capSpentNote(lines: readonly CapLine[]): string {
  const what = lines.map((l) => `${capLabel(l.cap)} (${formatUse(l.key, l.used, l.limit)})`).join("; ");
  return `**Spend cap reached:** ${what}. Governance stops every subagent while it is spent: do not delegate; finish with what you have and tell the user, who may raise it (\`${capRaiseCommand(lines[0] as CapLine)}\`).`;
}

const PERIOD_WORD: Record<CapName, string> = {
  "project.daily": "project today",
  "project.weekly": "project this week",
  "user.daily": "you today (all projects)",
  "user.weekly": "you this week (all projects)",
};

/**
 * One cap's use as `status`, `budget --project` and the dashboard show it: every capped key against its cap
 * (`$0.42 of $20.00 cost (2%)`), else the spend so far (cost, tokens, model requests) with "no cap".
 */
export function capUseLine(input: { cap: CapName; use: Readonly<Record<PeriodKey, number>>; limits: Readonly<Partial<Record<PeriodKey, number>>> }): string {
  const capped = (Object.entries(input.limits) as Array<[PeriodKey, number]>).filter(([, v]) => v !== undefined);
  const body =
    capped.length > 0
      ? capped.map(([key, limit]) => `${formatUse(key, input.use[key], limit)} (${Math.round((input.use[key] / limit) * 100)}%)`).join(" · ")
      : `${formatDollars(input.use.cost, 0.01)} cost · ${Math.round(input.use.tokens)} tokens · ${input.use.modelRequests} model requests (no cap)`;
  return `${PERIOD_WORD[input.cap]}: ${body}`;
}

/** When a cap's window ends: the next day, or the Monday after the week (00:00 in the user's zone). */
export function capResetText(cap: CapName, resetsOn: string, timeZone: string): string {
  return `${cap.endsWith("daily") ? "at midnight" : "on Monday"} (${resetsOn} 00:00, ${timeZone})`;
}

/**
 * The refusal a `task` call gets while a cap is spent (the spawn gate): which cap, how much of it, when it resets and
 * what the user may do, so the model finishes itself instead of retrying the spawn.
 */
export function buildCapSpawnRefusal(input: { line: CapLine; resetsOn: string; timeZone: string; targetAgent: string }): string {
  const { line } = input;
  return [
    "⛔ GOVERNANCE: SPAWN REFUSED (SPEND CAP REACHED)",
    `Subagent "${input.targetAgent}" was not started: ${capLabel(line.cap)} is spent (${formatUse(line.key, line.used, line.limit)} used).`,
    `It resets ${capResetText(line.cap, input.resetsOn, input.timeZone)}. Every subagent is refused or stopped until then.`,
    "Do not retry the spawn and do not delegate: finish the task yourself with what you have, or stop and tell the user.",
    `The user may raise the cap with \`${capRaiseCommand(line)}\` (a person's command, outside this session).`,
    END,
  ].join("\n");
}
