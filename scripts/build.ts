/**
 * `npm run build`: what the package ships, in dist/.
 *
 * - `tsc -p tsconfig.build.json` compiles governance/ and cli/ (the CLI and `opencode-governance/governance`) with
 *   their type declarations, and emits the declarations of plugin/.
 * - esbuild then replaces dist/plugin/index.js with one self-contained ESM file: plugin/ + governance/ + its runtime
 *   dependencies, tree-shaken, whitespace-minified — and, beside it, the chunks of what the plugin imports only on
 *   demand (the YAML config parser: `loadConfig` needs it only for a file that differs from the generated defaults;
 *   the OpenTelemetry SDK: plugin/telemetry/telemetry.ts imports it only when export is switched on). OpenCode loads this file into its own process for every project,
 *   so it pays for every module it resolves and parses: the unbundled tree (two copies of zod — ours and the one
 *   `@opencode-ai/plugin` pins —, all of date-fns, graceful-fs (gone since) …) cost ~43 MiB RSS and ~230 ms to import under Bun,
 *   the bundle ~28 MiB and ~150 ms, ~25 MiB once zod is imported as a namespace (docs/performance.md). One zod: `@opencode-ai/plugin`'s `tool()` is the identity
 *   and `tool.schema` is its zod, so every `zod` import resolves to the package's own copy.
 *   The other plugin/*.js tsc emitted are removed (nothing loads them); their .d.ts stay for index.d.ts.
 *
 * CLI and dashboard code never enters the plugin bundle: plugin/ does not import cli/ (test/architecture checks it).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
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

const outdir = path.join(dist, "plugin");
const result = await esbuild.build({
  absWorkingDir: root,
  // The server plugin (both hosts) and OpenCode 2's TUI entry (plugin/tui/index.ts → dist/plugin/tui.js).
  entryPoints: { index: "plugin/index.ts", tui: "plugin/tui/index.ts" },
  outdir,
  entryNames: "[name]",
  chunkNames: "chunk-[hash]",
  splitting: true,
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
  // CommonJS dependencies (yaml's node build) may call require(): give the ESM files a real require.
  banner: { js: 'import { createRequire as __ocgCreateRequire } from "node:module"; const require = __ocgCreateRequire(import.meta.url);' },
  plugins: [{ name: "one-zod", setup: (b) => b.onResolve({ filter: /^zod$/ }, () => ({ path: zodEntry })) }],
});
const outputs = result.metafile.outputs;
// The TUI entry's declarations sit beside its bundle, as index.d.ts does (tsc wrote them to dist/plugin/tui/).
writeFileSync(path.join(outdir, "tui.d.ts"), 'export * from "./tui/index.js";\nexport { default } from "./tui/index.js";\n');
const entry = Object.keys(outputs).find((f) => outputs[f]?.entryPoint === "plugin/index.ts");
if (!entry) throw new Error("esbuild wrote no dist/plugin/index.js");
/** What OpenCode loads when it imports the plugin: the entry and the chunks it imports statically, transitively. */
const loadedAtStart = new Set<string>();
for (const queue = [entry]; queue.length > 0; ) {
  const file = queue.pop()!;
  if (loadedAtStart.has(file)) continue;
  loadedAtStart.add(file);
  for (const imp of outputs[file]?.imports ?? []) if (imp.kind === "import-statement" && outputs[imp.path]) queue.push(imp.path);
}
const inputsOf = (files: Iterable<string>) => [...files].flatMap((f) => Object.keys(outputs[f]?.inputs ?? {}));
// `import { z } from "zod"` (and @opencode-ai/plugin's `tool.schema`) is zod's namespace object: it keeps every
// export — ~40 locales, JSON Schema import, the compiler — 570 of the bundle's 907 KiB. Named builders
// (governance/zod.ts) let esbuild keep only what is used (~140 KiB). Refuse a build that brings them back.
const heavy = inputsOf(Object.keys(outputs)).filter((f) => /zod\/v4\/(locales\/(?!en\.js)|classic\/from-json-schema)/.test(f));
if (heavy.length > 0)
  throw new Error(
    `the plugin bundle pulls in zod's whole namespace (${heavy.length} modules such as ${heavy[0]}): import z from governance/zod.ts, never \`{ z }\` from "zod" or tool.schema`,
  );
// The YAML parser is loaded on demand only; a static import of it (or of config-parse.ts) would load it in every session.
const yamlAtStart = inputsOf(loadedAtStart).filter((f) => /node_modules\/yaml\/|config-parse\.ts$/.test(f));
if (yamlAtStart.length > 0) throw new Error(`dist/plugin/index.js loads the YAML parser at start (${yamlAtStart[0]}): import it with import() only`);
// Likewise the OpenTelemetry SDK: with telemetry off (the default) it is never loaded (plugin/telemetry/telemetry.ts).
const otelAtStart = inputsOf(loadedAtStart).filter((f) => /node_modules\/@opentelemetry\/|plugin\/telemetry\/otel-backend\.ts$/.test(f));
if (otelAtStart.length > 0) throw new Error(`dist/plugin/index.js loads the OpenTelemetry SDK at start (${otelAtStart[0]}): import it with import() only`);
const kib = (files: Iterable<string>) => ([...files].reduce((n, f) => n + (outputs[f]?.bytes ?? 0), 0) / 1024).toFixed(0);
const onDemand = Object.keys(outputs).filter((f) => !loadedAtStart.has(f) && f.endsWith(".js"));
console.log(`dist/plugin/index.js: ${kib(loadedAtStart)} KiB loaded at start (${loadedAtStart.size} file(s)), ${kib(onDemand)} KiB on demand`);
