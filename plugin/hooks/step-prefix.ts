import { textTools } from "../../governance/host/host-lines.ts";
import { buildGovernancePrefix } from "../../governance/texts/governance-prefix.ts";
import type { HostLine } from "../../governance/host/host-lines.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { StopController } from "../stop/stop-controller.ts";
import type { BudgetGuard } from "../budget/budget-guard.ts";

/** What a model step's prefix uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type StepPrefixDeps = {
  readonly ctx: Pick<PluginContext, "clock" | "config" | "viewOf" | "sealOf">;
  readonly tracker: Pick<SessionTracker, "ensureSeen">;
  readonly runner: Pick<EffectRunner, "dispatchSoft">;
  readonly stops: Pick<StopController, "onLife">;
  readonly budget: Pick<BudgetGuard, "onModelStep">;
  readonly host: { readonly line: HostLine };
};

/**
 * A model step to prepare, its stable part: the governance prefix on EVERY model step of a governed session (the host
 * rebuilds its request each step, so nothing is injected "once"). The prefix is built only from what is stable for
 * the session (who the agent is, config), so the system prompt is byte-identical from step to step and a provider's
 * prompt cache survives; what changes is the status note (step-notes.ts, docs/decisions/0011-stable-system-prompt.md).
 * Answers the text the adapter appends to its host's system prompt, or undefined. The adapter decides which requests
 * are model steps (OpenCode 1: not its title generator or summarizer; OpenCode 2: the `context` hook's).
 */
export async function prefixStep(rt: StepPrefixDeps, sessionId: string): Promise<string | undefined> {
  const { ctx, tracker, runner } = rt;
  await tracker.ensureSeen(sessionId);
  const record = await runner.dispatchSoft(sessionId, { type: "model_step", at: ctx.clock.now(), phase: ctx.config.phase });
  rt.stops.onLife(sessionId);
  if (!record) return undefined;
  await rt.budget.onModelStep(sessionId, record);
  const config = ctx.config;
  const who = ctx.viewOf(record.agent, record.depth);
  const seal = ctx.sealOf(sessionId);
  // Built once per session and view, not per step: its inputs are stable for the session or change with the config.
  const key = `${who.agent}\0${who.role}\0${who.level}\0${who.depth}\0${who.maxDepth}\0${who.mayDelegateTo.join("\0")}\0${seal}`;
  let built = prefixes.get(config);
  if (!built) {
    built = new Map<string, string>();
    prefixes.set(config, built);
  }
  let prefix = built.get(key);
  if (prefix === undefined) {
    if (built.size >= PREFIXES_KEPT) built.clear();
    prefix = buildGovernancePrefix({ who, language: config.language, phase: config.phase, seal, tools: textTools(rt.host.line) });
    built.set(key, prefix);
  }
  return prefix;
}

/** Prefixes built, per config (an edited config is a new object: its prefixes are built anew), keyed by their inputs. */
const prefixes = new WeakMap<object, Map<string, string>>();
const PREFIXES_KEPT = 512;
