import { takeStandDown } from "../../governance/budget/budget-step.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";

/**
 * A raise stood this session's budget stop down (docs/budgets.md): it is told once, on its next tool result, that it
 * may go on, with what is left of its own budgets and its tree's (`takeStandDown` decides and words it). The mark
 * lives on the record, so it survives the session going idle in between; taking it is a soft step (written behind).
 */
export async function standDownNotice(runner: EffectRunner, sessionId: string): Promise<string | undefined> {
  const record = runner.sessions.peek(sessionId);
  if (!record) return undefined;
  const { config, clock } = runner.ctx;
  const root = runner.sessions.peek(record.rootId);
  const at = clock.now();
  const res = runner.sessions.softStep(sessionId, (r) => takeStandDown(r, config, root, at));
  if (!res?.text) return undefined;
  await runner.run(sessionId, res.effects, res);
  return res.text;
}
