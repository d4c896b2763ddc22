import { config } from "zod";

/**
 * The one zod every governance, plugin and CLI module uses (`import * as z from ".../governance/zod.ts"`; a test
 * refuses a direct `from "zod"`), configured before any schema exists: `jitless`. Zod 4 otherwise compiles a parser
 * with `new Function` for each object schema on its first parse — measured under the host's Bun, ~180 KiB of memory
 * and a JIT compilation per schema to speed up parses that governance makes a few times per session (config, record,
 * event, queue file). Measured and decided in docs/performance.md ("zod without its JIT").
 *
 * `jitless` is read when a schema is constructed, so this module must be evaluated before any schema module: every
 * schema module imports `z` from here, which ES module evaluation order guarantees.
 */
const processJitless = config().jitless;
config({ jitless: true });

/**
 * Gives the process its own `jitless` back once governance's schemas exist. Zod keeps its configuration on
 * `globalThis.__zod_globalConfig`, one object shared by every zod 4 copy in the process — inside OpenCode, the
 * host's own (1.18.33's binary carries two copies, both on it): left on, governance's switch would also turn off the
 * JIT of every schema the host builds after loading the plugin. A plugin does not reconfigure its host's libraries.
 * The plugin's entry calls it after its imports (plugin/index.ts); a CLI or test process keeps the switch.
 */
export function restoreProcessZodConfig(): void {
  const shared = config();
  if (processJitless === undefined) delete shared.jitless;
  else shared.jitless = processJitless;
}

// The builders governance uses, re-exported by name: zod's namespace object (`export *` from "zod" includes it) would
// keep every export in the plugin bundle — ~40 locales, JSON Schema import — which scripts/build.ts refuses.
export {
  array,
  boolean,
  discriminatedUnion,
  enum,
  literal,
  looseObject,
  NEVER,
  number,
  object,
  partialRecord,
  prettifyError,
  record,
  strictObject,
  string,
  union,
  unknown,
} from "zod";
export type { infer, input, output, ZodType } from "zod";
