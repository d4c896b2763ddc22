import { execFileSync } from "node:child_process";
import fs from "fs-extra";
import path from "node:path";
import { hostUnderTest } from "./host-under-test.ts";
import { DEFAULT_OPENCODE_BIN, OPENCODE_BIN, REPO_ROOT, WARM_DEPS_ROOT } from "./paths.ts";

/**
 * OpenCode writes a package.json into `<project>/.opencode/` and `$XDG_CONFIG_HOME/opencode/` at start and runs a
 * package install there before loading plugins (~15–25 s from the registry). We install those dependencies once
 * into a git-ignored cache and link them into every test project, so a run starts in ~3–5 s and touches no
 * network but 127.0.0.1.
 */
export function opencodeVersion(): string {
  if (OPENCODE_BIN !== DEFAULT_OPENCODE_BIN) return hostUnderTest().version;
  const pkg = fs.readJsonSync(path.join(REPO_ROOT, "node_modules", "opencode-ai", "package.json")) as { version: string };
  return pkg.version;
}

/** The warm dependency folder of the OpenCode under test (the pinned one keeps the historical path). */
function warmDeps(): string {
  return OPENCODE_BIN === DEFAULT_OPENCODE_BIN ? WARM_DEPS_ROOT : `${WARM_DEPS_ROOT}-v${opencodeVersion()}`;
}

export function depsManifest(): Record<string, unknown> {
  return { dependencies: { "@opencode-ai/plugin": opencodeVersion() } };
}

export function ensureOpencodeBinary(): void {
  if (OPENCODE_BIN !== DEFAULT_OPENCODE_BIN) {
    execFileSync(OPENCODE_BIN, ["--version"], { stdio: "pipe", timeout: 30_000 });
    return;
  }
  try {
    execFileSync(OPENCODE_BIN, ["--version"], { stdio: "pipe", timeout: 30_000 });
  } catch {
    // npm may skip install scripts; the opencode-ai postinstall links the platform binary.
    execFileSync(process.execPath, [path.join(REPO_ROOT, "node_modules", "opencode-ai", "postinstall.mjs")], { stdio: "inherit" });
    execFileSync(OPENCODE_BIN, ["--version"], { stdio: "pipe", timeout: 30_000 });
  }
}

export function ensureWarmDeps(): void {
  // OpenCode 2 installs other packages (`@opencode/*`, not on this registry): nothing to pre-install for it.
  if (hostUnderTest().line === 2) return;
  const WARM_DEPS = warmDeps();
  const manifest = path.join(WARM_DEPS, "package.json");
  const marker = path.join(WARM_DEPS, "node_modules", "@opencode-ai", "plugin", "package.json");
  const want = JSON.stringify(depsManifest());
  if (fs.existsSync(marker) && fs.existsSync(manifest) && fs.readFileSync(manifest, "utf8") === want) return;
  fs.removeSync(WARM_DEPS);
  fs.mkdirpSync(WARM_DEPS);
  fs.writeFileSync(manifest, want);
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline", "--loglevel=error"], {
    cwd: WARM_DEPS,
    stdio: "inherit",
    timeout: 300_000,
  });
}

/** Gives an OpenCode config folder (project `.opencode/` or the global one) the warm dependencies. */
export function linkWarmDeps(dir: string, line = hostUnderTest().line): void {
  fs.mkdirpSync(dir);
  if (line === 2) return;
  const WARM_DEPS = warmDeps();
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(depsManifest()));
  const lock = path.join(WARM_DEPS, "package-lock.json");
  if (fs.existsSync(lock)) fs.copyFileSync(lock, path.join(dir, "package-lock.json"));
  fs.ensureSymlinkSync(path.join(WARM_DEPS, "node_modules"), path.join(dir, "node_modules"), "dir");
}
