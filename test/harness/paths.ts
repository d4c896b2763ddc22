import path from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (this file lives in test/harness/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Warm, git-ignored cache shared by all e2e runs (OpenCode's plugin deps, so no run installs anything). */
export const E2E_CACHE = path.join(REPO_ROOT, ".e2e-cache");
export const WARM_DEPS = path.join(E2E_CACHE, "opencode-deps");
export const OPENCODE_BIN = path.join(REPO_ROOT, "node_modules", ".bin", "opencode");
/** The built plugin entry (what npm users get). `npm test` builds before running. */
export const PLUGIN_ENTRY = path.join(REPO_ROOT, "dist", "plugin", "index.js");
export const CLI_ENTRY = path.join(REPO_ROOT, "dist", "cli", "main.js");
