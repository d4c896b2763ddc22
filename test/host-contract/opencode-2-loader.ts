import type { V2Context } from "../../plugin/opencode-2/types.ts";

/**
 * OpenCode 2's loader shape check, as the double applies it (packages/core/src/plugin/module.ts): `default` must be
 * `{ id: string, effect: fn } | { id: string, setup: fn }` (extra keys ignored), else `PluginModule.LoadError` with
 * the exact message below.
 */
export const LOAD_ERROR = "Plugin must export a default definition with an id and an effect or setup function.";

export class PluginLoadError extends Error {
  readonly _tag = "PluginModule.LoadError";
}

/** The loader's shape check (module.ts `Definition`). */
export function checkPluginModule(mod: unknown): { id: string; setup: (ctx: V2Context) => unknown } {
  const def = (mod as { default?: unknown } | null)?.default as Record<string, unknown> | undefined;
  const ok = def && typeof def === "object" && typeof def.id === "string" && (typeof def.effect === "function" || typeof def.setup === "function");
  if (!ok) throw new PluginLoadError(LOAD_ERROR);
  if (typeof def.setup !== "function") throw new Error("effect plugins are not modelled by this double");
  return def as { id: string; setup: (ctx: V2Context) => unknown };
}
