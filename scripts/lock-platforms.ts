/**
 * Lock entries for the platform packages this registry does not serve (docs/decisions/0022-lock-every-platform.md).
 *
 * `npm ci` refuses a lock in which a locked package's optional dependency has no entry ("Missing: … from lock file").
 * `npm install` writes an entry for every platform's optional package it can fetch the metadata of; the registry this
 * project is built against serves opencode-ai 1.18.33 only its linux-x64 binaries, so `npm install` leaves the other
 * ten out. This script adds them, with what OpenCode's own build script publishes in each (`name`, `version`,
 * `os: [<os>]`, `cpu: [<arch>]`, packages/opencode/script/build.ts): npm then skips them where os/cpu do not match,
 * and fetches them by name and version where they do (no `integrity`: npm records the one it downloads). Any other
 * missing optional package is reported, not invented.
 *
 * Run after `npm install` changed the lock: `npm run lock:platforms`.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

type LockEntry = {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
};
export type Lockfile = { packages: Record<string, LockEntry>; [key: string]: unknown };
export type MissingOptional = { name: string; version: string; requiredBy: string; dev: boolean };

/** Where npm looks for `name` from the package at `from`: its own node_modules, then each ancestor's, then the root's. */
function resolves(packages: Lockfile["packages"], from: string, name: string): boolean {
  let base = from;
  for (;;) {
    const candidate = base === "" ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[candidate]) return true;
    if (base === "") return false;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut === -1 ? "" : base.slice(0, cut);
  }
}

/** Optional dependencies of locked packages that have no lock entry of their own: what makes `npm ci` refuse. */
export function missingOptionals(lock: Lockfile): MissingOptional[] {
  const missing: MissingOptional[] = [];
  for (const [at, entry] of Object.entries(lock.packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      if (!resolves(lock.packages, at, name)) missing.push({ name, version, requiredBy: at, dev: entry.dev === true });
    }
  }
  return missing;
}

const OPENCODE_PLATFORM = /^opencode-(darwin|linux|windows)-(arm64|x64)(-baseline)?(-musl)?$/;

/** os/cpu of an OpenCode platform package, from its name as OpenCode's build script forms it (`windows` = win32). */
export function opencodePlatform(name: string): { os: string[]; cpu: string[] } | undefined {
  const m = OPENCODE_PLATFORM.exec(name);
  if (!m) return undefined;
  return { os: [m[1] === "windows" ? "win32" : m[1]!], cpu: [m[2]!] };
}

/** The lock with an entry for every missing OpenCode platform package, and what could not be filled. */
export function fillPlatforms(lock: Lockfile): { lock: Lockfile; added: string[]; unknown: MissingOptional[] } {
  const packages = { ...lock.packages };
  const added: string[] = [];
  const unknown: MissingOptional[] = [];
  for (const miss of missingOptionals(lock)) {
    const platform = opencodePlatform(miss.name);
    const key = `node_modules/${miss.name}`;
    if (!platform || packages[key]) {
      if (!platform) unknown.push(miss);
      continue;
    }
    packages[key] = { version: miss.version, cpu: platform.cpu, ...(miss.dev ? { dev: true } : {}), optional: true, os: platform.os };
    added.push(`${miss.name}@${miss.version}`);
  }
  // npm's own order (root first, then localeCompare "en"), so that `npm install` rewrites the file unchanged.
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b, "en"))));
  return { lock: { ...lock, packages: sorted }, added, unknown };
}

function main(): void {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "package-lock.json");
  const { lock, added, unknown } = fillPlatforms(JSON.parse(fs.readFileSync(file, "utf8")) as Lockfile);
  if (added.length > 0) fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(added.length > 0 ? `added to package-lock.json: ${added.join(", ")}` : "package-lock.json: every platform package has its entry");
  for (const u of unknown)
    console.error(`not an OpenCode platform package, left for npm install: ${u.name}@${u.version} (optional dependency of ${u.requiredBy})`);
  if (unknown.length > 0) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
