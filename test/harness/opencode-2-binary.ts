import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { E2E_CACHE } from "./paths.ts";

/**
 * The released OpenCode 2 binary the suite runs beside the pinned OpenCode 1 (issue 40). It is not a dev dependency:
 * the package is ~89 MB to download and ~201 MB unpacked, and has no `bin` entry (npm would link nothing). The test
 * prerequisites (`npm test`'s pretest) and the suite's global setup fetch it once with `npm pack` — the pinned version,
 * the tarball checked against the pinned sha1 and the registry's sha512 — and unpack it into the git-ignored cache.
 * Where that cannot be done the OpenCode 2 end-to-end file is skipped with the reason in its name.
 */
export const OPENCODE_2 = {
  spec: "@opencode/cli-linux-x64-baseline@2.0.15",
  version: "2.0.15",
  /** `npm pack --json` → shasum of the tarball, as published (docs/testing.md). */
  sha1: "997d36a6365113850e7470c000943e094bd6b785",
  integrity: "sha512-ZT9TxDqUAGrjvIcRVXOlx78v+J7pQd7K3WeI94/KYTTjKkgGs7JQyc060VdCML5URIN6rUlWb7midq4EhPX3BQ==",
} as const;

/** Where the unpacked package lives: `<cache>/package/bin/opencode`. */
export const OPENCODE_2_DIR = path.join(E2E_CACHE, `opencode-${OPENCODE_2.version}`);
export const OPENCODE_2_BIN = path.join(OPENCODE_2_DIR, "package", "bin", "opencode");
/** Written after the version check passed; its absence means "not installed" (a half-unpacked folder is redone). */
const MARKER = path.join(OPENCODE_2_DIR, "verified");
/** Why the last install attempt failed: the skip text of the OpenCode 2 file. */
const FAILURE = path.join(E2E_CACHE, `opencode-${OPENCODE_2.version}.failed`);

export type Opencode2 = { ok: true; bin: string; version: string } | { ok: false; reason: string };

/** Whether the binary is here and verified, without installing anything (what a test file reads when it loads). */
export function opencode2(): Opencode2 {
  if (fs.existsSync(MARKER) && fs.existsSync(OPENCODE_2_BIN)) return { ok: true, bin: OPENCODE_2_BIN, version: OPENCODE_2.version };
  const failed = fs.existsSync(FAILURE) ? fs.readFileSync(FAILURE, "utf8").trim() : "";
  return { ok: false, reason: failed || `OpenCode ${OPENCODE_2.version} not installed (npm test's pretest installs it: scripts/test-prerequisites.ts)` };
}

/** The platform this package runs on: the `-baseline` build is Linux x64 only (any x64, no AVX2 needed). */
function platformProblem(): string | undefined {
  if (process.platform !== "linux" || process.arch !== "x64")
    return `no ${OPENCODE_2.spec} build for ${process.platform}-${process.arch} (the package is linux-x64 only)`;
  return undefined;
}

/**
 * Installs the pinned OpenCode 2 into the cache once (a verified copy is reused), says what it does through `log`,
 * and answers the binary or why not. `OPENCODE_GOVERNANCE_NO_OPENCODE2=1` turns the download off.
 */
export function ensureOpencode2(log: (line: string) => void = console.log): Opencode2 {
  const have = opencode2();
  if (have.ok) return have;
  const fail = (reason: string): Opencode2 => {
    fs.mkdirSync(E2E_CACHE, { recursive: true });
    fs.writeFileSync(FAILURE, reason);
    log(`test prerequisites: ${reason}; the OpenCode 2 end-to-end tests are SKIPPED.`);
    return { ok: false, reason };
  };
  const platform = platformProblem();
  if (platform) return fail(platform);
  if (process.env.OPENCODE_GOVERNANCE_NO_OPENCODE2 === "1") return fail(`OPENCODE_GOVERNANCE_NO_OPENCODE2=1: OpenCode ${OPENCODE_2.version} not downloaded`);
  log(`test prerequisites: fetching ${OPENCODE_2.spec} (~89 MB, once) with npm pack into ${path.relative(process.cwd(), OPENCODE_2_DIR) || OPENCODE_2_DIR}.`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-opencode2-"));
  try {
    let packed: { filename: string; shasum: string; integrity: string }[];
    try {
      const out = execFileSync("npm", ["pack", OPENCODE_2.spec, "--json", "--pack-destination", tmp, "--loglevel=error"], {
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 600_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      packed = JSON.parse(out.toString());
    } catch (error) {
      return fail(`npm pack ${OPENCODE_2.spec} failed (${firstLine(error)})`);
    }
    const tarball = path.join(tmp, packed[0]?.filename ?? "");
    if (!packed[0] || !fs.existsSync(tarball)) return fail(`npm pack ${OPENCODE_2.spec} produced no tarball`);
    const bytes = fs.readFileSync(tarball);
    const sha1 = crypto.createHash("sha1").update(bytes).digest("hex");
    const integrity = `sha512-${crypto.createHash("sha512").update(bytes).digest("base64")}`;
    if (sha1 !== OPENCODE_2.sha1 || integrity !== OPENCODE_2.integrity)
      return fail(`${OPENCODE_2.spec} tarball does not match the pinned checksum (sha1 ${sha1}, expected ${OPENCODE_2.sha1})`);
    fs.rmSync(OPENCODE_2_DIR, { recursive: true, force: true });
    fs.mkdirSync(OPENCODE_2_DIR, { recursive: true });
    execFileSync("tar", ["xzf", tarball, "-C", OPENCODE_2_DIR], { stdio: "pipe" });
    let version = "";
    try {
      version = execFileSync(OPENCODE_2_BIN, ["--version"], { stdio: "pipe", timeout: 60_000, env: { ...process.env, OPENCODE_DISABLE_AUTOUPDATE: "1" } })
        .toString()
        .trim();
    } catch (error) {
      return fail(`the unpacked OpenCode ${OPENCODE_2.version} does not start (${firstLine(error)})`);
    }
    if (version !== `opencode v${OPENCODE_2.version}`) return fail(`the unpacked binary says "${version}", expected "opencode v${OPENCODE_2.version}"`);
    fs.writeFileSync(MARKER, `${version}\n${sha1}\n`);
    fs.rmSync(FAILURE, { force: true });
    log(`test prerequisites: ${version} ready at ${OPENCODE_2_BIN} (sha1 ${sha1} verified).`);
    return { ok: true, bin: OPENCODE_2_BIN, version: OPENCODE_2.version };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function firstLine(error: unknown): string {
  const e = error as { stderr?: Buffer; message?: string };
  const text = e.stderr?.toString().trim() || e.message || String(error);
  return (
    text
      .split("\n")
      .find((l) => l.trim())
      ?.slice(0, 200) ?? "unknown error"
  );
}
