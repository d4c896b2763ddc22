import path from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (this file lives in test/harness/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Warm, git-ignored cache shared by all e2e runs (OpenCode's plugin deps, so no run installs anything). */
export const E2E_CACHE = path.join(REPO_ROOT, ".e2e-cache");
/** The pinned OpenCode 1 dev dependency: what the suite runs unless `OPENCODE_BIN` names another binary. */
export const DEFAULT_OPENCODE_BIN = path.join(REPO_ROOT, "node_modules", ".bin", "opencode");
/**
 * The `opencode` under test: `OPENCODE_BIN=/path/to/opencode` runs the end-to-end suite against any OpenCode 1 or 2
 * binary (test/harness/host-under-test.ts finds which line it is); `npm run test:compat` uses it for the matrix.
 */
export const OPENCODE_BIN = process.env.OPENCODE_BIN ? path.resolve(process.env.OPENCODE_BIN) : DEFAULT_OPENCODE_BIN;
/** OpenCode's plugin dependencies, per OpenCode version (a matrix run keeps each warm). */
export const WARM_DEPS_ROOT = path.join(E2E_CACHE, "opencode-deps");
export const WARM_DEPS = WARM_DEPS_ROOT;
/** The built plugin entry (what npm users get). `npm test` builds before running. */
export const PLUGIN_ENTRY = path.join(REPO_ROOT, "dist", "plugin", "index.js");
export const CLI_ENTRY = path.join(REPO_ROOT, "dist", "cli", "main.js");
