import type { StopOrigin } from "../texts/stop-directives.ts";

/**
 * Who asked for a stop, as every text says it (issue 28 §2): governance's own stops (a budget, the loop guard, a tree
 * budget) are requested `by: "governance"`; every other stop came from the user (the CLI, the dashboard, or a
 * primary agent's `governance_stop` tool acting for the user). Only the user's stop says "the user".
 */
export const GOVERNANCE_REQUESTER = "governance";

export function stopOrigin(stop: { requestedBy: string } | null | undefined): StopOrigin {
  return stop?.requestedBy === GOVERNANCE_REQUESTER ? "governance" : "user";
}
