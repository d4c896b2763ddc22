import { takeStandDownNotice } from "../../governance/budget/budget-check.ts";
import { standDownText } from "../../governance/budget/budget-step.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";

/**
 * A raise stood this session's budget stop down (docs/budgets.md): it is told once, on its next tool result, that it
 * may go on, with what is left of its own budgets and its tree's (`standDownText`). The mark lives on the record, so
 * it survives the session going idle in between; taking it is a soft step (written behind) and audited `budget_resumed`.
 */
export async function standDownNotice(runner: EffectRunner, sessionId: string): Promise<string | undefined> {
  const record = runner.sessions.peek(sessionId);
  if (!record?.budget.stoodDown || record.control !== "active") return undefined;
  const res = runner.sessions.softStep(sessionId, takeStandDownNotice);
  if (!res?.scope) return undefined;
  await runner.run(sessionId, res.effects, res);
  const { config, clock } = runner.ctx;
  return standDownText(config, record, runner.sessions.peek(record.rootId), clock.now());
}
