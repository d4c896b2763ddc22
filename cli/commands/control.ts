import { requestInject, requestStop, type RequestResult } from "../../governance/stop/control-requests.ts";
import { ackLine, awaitStopAcks, stopHeld } from "../../governance/stop/stop-ack.ts";
import { readConfig } from "../read-config.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";

function report(c: CommandContext, res: RequestResult, done: (ids: string) => string, refused: string): number {
  if (c.options.json) {
    c.io.json(
      res.ok
        ? { version: JSON_VERSION, ok: true, sessionIds: res.sessionIds, warnings: res.warnings }
        : { version: JSON_VERSION, ok: false, reason: res.reason, ...(res.candidates ? { candidates: res.candidates } : {}) },
    );
    return res.ok ? 0 : 1;
  }
  if (!res.ok) {
    c.io.errLine(["red", `${refused}: `], res.reason);
    return 1;
  }
  for (const w of res.warnings) c.io.errLine(["yellow", "warning: "], w);
  c.io.line(["green", done(res.sessionIds.join(", "))]);
  return 0;
}

/** `stop <session|agent|title fragment> [--level 1|2|3] [--reason text]`. */
export async function stopCommand(c: CommandContext): Promise<number> {
  const target = c.args[0];
  if (!target) return c.usage("stop needs a session id, an agent name or part of a session's title");
  const level = c.options.level === undefined ? 1 : Number(c.options.level);
  if (level !== 1 && level !== 2 && level !== 3) return c.usage("--level must be 1, 2 or 3");
  const res = await requestStop(c.control, target, { level, reason: c.options.reason ?? "" });
  if (!res.ok || !res.queued || c.options["no-wait"])
    return report(c, res, (ids) => `stop queued (level ${level}) for ${ids}, not waiting for OpenCode to take it`, "not stopped");
  // Acknowledged, not only written: the hosting OpenCode process says it took the request (issue 41 §4).
  const acks = await awaitStopAcks(c.control, res.queued);
  const ok = acks.every(stopHeld);
  if (c.options.json) {
    const detail = res.queued.map((q, i) => ({ sessionId: q.sessionId, requestId: q.directive.id, ...acks[i]!, hostPid: q.hostPid }));
    c.io.json({ version: JSON_VERSION, ok, sessionIds: res.sessionIds, warnings: res.warnings, acks: detail });
    return ok ? 0 : 1;
  }
  for (const w of res.warnings) c.io.errLine(["yellow", "warning: "], w);
  for (const [i, q] of res.queued.entries()) {
    const ack = acks[i]!;
    if (stopHeld(ack)) c.io.line(["green", ackLine(q, ack)]);
    else c.io.errLine(["red", "not stopped: "], ackLine(q, ack));
  }
  return ok ? 0 : 1;
}

/** `inject <session|agent|title fragment> <text>`: validated like every other way in. */
export async function injectCommand(c: CommandContext): Promise<number> {
  const [target, ...words] = c.args;
  if (!target || words.length === 0) return c.usage('inject needs a target and the text: inject <session|agent|title> "text"');
  const config = await readConfig(c.store.paths.configFile);
  const res = await requestInject(c.control, target, words.join(" "), { maxLength: config.config.inject.maxLength });
  return report(c, res, (ids) => `guidance queued for ${ids}`, "not sent");
}
