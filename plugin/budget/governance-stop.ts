import type { GovernanceStop } from "../../governance/budget/budget-step.ts";
import { GOVERNANCE_REQUESTER } from "../../governance/session/stop-origin.ts";
import type { StopController } from "../stop/stop-controller.ts";

/** A stop governance asks for (a budget, a cap over time, the loop guard): L1 of the ladder, governance as the requester. */
export function beginGovernanceStop(stops: StopController, at: number, sessionId: string, stop: GovernanceStop): Promise<void> {
  return stops.begin(sessionId, [{ kind: "stop", id: stop.id, at, level: 1, reason: stop.reason, by: GOVERNANCE_REQUESTER }]);
}
