import type { GovernanceStop } from "../../governance/budget/budget-step.ts";
import { GOVERNANCE_REQUESTER } from "../../governance/session/stop-origin.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { StopController } from "../stop/stop-controller.ts";

/**
 * A stop governance asks for (a budget, a cap over time, the loop guard): L1 of the ladder, governance as the requester.
 * `stands` is asked again at the stop's first step, on the record as it is then (a raise may have come in between).
 */
export function beginGovernanceStop(
  stops: StopController,
  at: number,
  sessionId: string,
  stop: GovernanceStop,
  stands?: (r: SessionRecord) => boolean,
): Promise<void> {
  return stops.begin(sessionId, [{ kind: "stop", id: stop.id, at, level: 1, reason: stop.reason, by: GOVERNANCE_REQUESTER }], stands);
}
