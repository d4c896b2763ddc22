import path from "node:path";
import { fileURLToPath } from "node:url";

/** The package root (`cli/` in the source tree, `dist/cli/` when built). */
export function packageRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.basename(path.dirname(here)) === "dist" ? path.resolve(here, "../..") : path.resolve(here, "..");
}

export const PLUGIN_NAME = "opencode-governance";

/** The JSON Schema of governance.yaml: shipped in `schema/`, copied next to the YAML by `init`. */
export const SCHEMA_FILE_NAME = "governance.schema.json";
