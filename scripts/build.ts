/**
 * `npm run build`: what the package ships, in dist/.
 *
 * - `tsc -p tsconfig.build.json` compiles governance/ and cli/ (the CLI and `opencode-governance/governance`) with
 *   their type declarations, and emits the declarations of plugin/.
 * - esbuild then replaces dist/plugin/index.js with ONE self-contained ESM file: plugin/ + governance/ + its runtime
 *   dependencies, tree-shaken, whitespace-minified. OpenCode loads this file into its own process for every project,
 *   so it pays for every module it resolves and parses: the unbundled tree (two copies of zod — ours and the one
 *   `@opencode-ai/plugin` pins —, all of date-fns, graceful-fs …) cost ~43 MiB RSS and ~230 ms to import under Bun,
 *   the bundle ~28 MiB and ~150 ms, ~25 MiB once zod is imported as a namespace (docs/performance.md). One zod: `@opencode-ai/plugin`'s `tool()` is the identity
 *   and `tool.schema` is its zod, so every `zod` import resolves to the package's own copy.
 *   The other plugin/*.js tsc emitted are removed (nothing loads them); their .d.ts stay for index.d.ts.
 *
 * CLI and dashboard code never enters the plugin bundle: plugin/ does not import cli/ (test/architecture checks it).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const require = createRequire(path.join(root, "package.json"));
/** zod's ESM entry as this package resolves it (the CJS path require() gives, mapped to its ESM sibling). */
const zodEntry = require.resolve("zod").replace(/index\.cjs$/, "index.js");

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });

function removeEmittedJs(dir: string): void {
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) removeEmittedJs(file);
    else if (/\.js(\.map)?$/.test(name)) rmSync(file);
  }
}
removeEmittedJs(path.join(dist, "plugin"));

const outfile = path.join(dist, "plugin", "index.js");
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["plugin/index.ts"],
  outfile,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  treeShaking: true,
  legalComments: "eof",
  metafile: true,
  logLevel: "warning",
  // CommonJS dependencies (proper-lockfile, graceful-fs) call require("fs"): give the ESM bundle a real require.
  banner: { js: 'import { createRequire as __ocgCreateRequire } from "node:module"; const require = __ocgCreateRequire(import.meta.url);' },
  plugins: [{ name: "one-zod", setup: (b) => b.onResolve({ filter: /^zod$/ }, () => ({ path: zodEntry })) }],
});
const output = Object.values(result.metafile.outputs)[0];
// `import { z } from "zod"` (and @opencode-ai/plugin's `tool.schema`) is zod's namespace object: it keeps every
// export — ~40 locales, JSON Schema import, the compiler — 570 of the bundle's 907 KiB. `import * as z` with
// static `z.object(...)` lets esbuild keep only what is used (~140 KiB). Refuse a build that brings them back.
const heavy = Object.keys(output?.inputs ?? {}).filter((f) => /zod\/v4\/(locales\/(?!en\.js)|classic\/from-json-schema)/.test(f));
if (heavy.length > 0)
  throw new Error(
    `dist/plugin/index.js pulls in zod's whole namespace (${heavy.length} modules such as ${heavy[0]}): import zod as \`import * as z from "zod"\`, never \`{ z }\` or tool.schema`,
  );
const bytes = output?.bytes ?? 0;
console.log(`dist/plugin/index.js: one ESM file, ${(bytes / 1024).toFixed(0)} KiB`);
