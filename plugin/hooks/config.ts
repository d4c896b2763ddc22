import type { Governor } from "../governor.ts";

/**
 * The `config` hook: OpenCode 1.18 refuses a subagent's own `task` call unless `subagent_depth` allows it (default 1),
 * which would make the configured hierarchy impossible and the refusal opaque. Raise it to the governed max depth so
 * governance decides (and explains) instead; a user's higher setting is kept.
 */
export async function configHook(gov: Governor, config: Record<string, unknown>): Promise<void> {
  const max = gov.config.delegation.maxDepth;
  const current = typeof config.subagent_depth === "number" ? config.subagent_depth : 1;
  // One more than governance's limit: the attempt beyond the limit must reach our gate, which halts it with an explanation.
  if (current <= max) {
    config.subagent_depth = max + 1;
    await gov.record("host_limit_raised", { setting: "subagent_depth", from: current, to: max + 1 });
  }
}
