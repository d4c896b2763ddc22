/**
 * `npm test` runs this first (pretest): the system programs the user-facing tests drive — tmux (the OpenCode TUI),
 * chromium (the dashboard in a browser), faketime (a long-lived server's wall clock moved) and bubblewrap (the agent
 * shell's sandbox, issue 41) — are installed from
 * Debian's packages when missing, as root or with sudo, and the run says so. Where that is not possible (no apt-get,
 * no root and no sudo that works without a password, or the install fails) it says which tests will be skipped and
 * the exact command that would install them, and goes on: a newcomer's `npm install && npm test` never fails for a
 * missing browser. OPENCODE_GOVERNANCE_NO_APT=1 turns the install off; `--dry-run` prints what would run, runs nothing.
 *
 * It runs with root's power, so it trusts nothing the run's environment chose (docs/security.md, "The test
 * prerequisites step"): only Debian's own programs by absolute path (/usr/bin/apt-get, /usr/bin/sudo — never the
 * first `apt-get` on PATH, which under `npm test` starts with node_modules/.bin), in a clean environment (no
 * APT_CONFIG, no LD_PRELOAD, none of the caller's variables), and sudo only with `-n`: it never asks for a password.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { ensureOpencode2 } from "../test/harness/opencode-2-binary.ts";

export const APT_GET = "/usr/bin/apt-get";
export const SUDO = "/usr/bin/sudo";
/** The whole environment the install runs with: nothing of the caller's is passed through. */
export const CLEAN_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
  DEBIAN_FRONTEND: "noninteractive",
  LC_ALL: "C",
});

export const PACKAGES = ["tmux", "chromium", "faketime", "bubblewrap"] as const;
export type Package = (typeof PACKAGES)[number];

/** Where Debian's packages put what the tests use (looked up by absolute path, not on PATH). */
const PROVIDES: Record<Package, readonly string[]> = {
  tmux: ["/usr/bin/tmux"],
  chromium: ["/usr/bin/chromium", "/usr/bin/chromium-browser"],
  faketime: [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
  ],
  // The confinement tests run agent shell commands in it (issue 41).
  bubblewrap: ["/usr/bin/bwrap"],
};

export function absentPackages(exists: (file: string) => boolean = fs.existsSync): Package[] {
  return PACKAGES.filter((p) => !PROVIDES[p].some(exists));
}

export type InstallPlan =
  | { kind: "nothing" }
  | { kind: "off"; message: string }
  /** Commands to run (argv, absolute program first) with `CLEAN_ENV`. */
  | { kind: "run"; as: "root" | "sudo"; commands: string[][] }
  /** Cannot install here: why, and the commands the user could run. */
  | { kind: "cannot"; why: string; commands: string[][] };

/** What to do for the packages absent here. Pure: the caller passes who it runs as and which files exist. */
export function planInstall(input: { absent: readonly Package[]; uid: number | undefined; noApt: boolean; exists: (file: string) => boolean }): InstallPlan {
  if (input.absent.length === 0) return { kind: "nothing" };
  if (input.noApt) return { kind: "off", message: "OPENCODE_GOVERNANCE_NO_APT=1, not installing anything." };
  const apt = [
    [APT_GET, "update", "-qq"],
    [APT_GET, "install", "-y", "-qq", "--no-install-recommends", ...input.absent],
  ];
  const withSudo = apt.map((c) => [SUDO, "-n", ...c]);
  if (!input.exists(APT_GET)) return { kind: "cannot", why: `no ${APT_GET} (not a Debian system)`, commands: [] };
  if (input.uid === 0) return { kind: "run", as: "root", commands: apt };
  if (!input.exists(SUDO)) return { kind: "cannot", why: `not root and no ${SUDO}`, commands: apt.map((c) => ["sudo", ...c]) };
  return { kind: "run", as: "sudo", commands: withSudo };
}

const shown = (commands: readonly string[][]) => commands.map((c) => c.join(" ")).join(" && ");

function main(argv: readonly string[]): void {
  const dryRun = argv.includes("--dry-run");
  // The released OpenCode 2 the suite runs beside OpenCode 1: `npm pack` of the pinned package into .e2e-cache/, once,
  // checksum-verified (test/harness/opencode-2-binary.ts). No root power is involved.
  if (!dryRun) ensureOpencode2();
  const absent = absentPackages();
  const plan = planInstall({ absent, uid: process.getuid?.(), noApt: process.env.OPENCODE_GOVERNANCE_NO_APT === "1", exists: fs.existsSync });
  let installed = false;
  if (plan.kind === "off") console.log(`test prerequisites: ${plan.message}`);
  else if (plan.kind === "cannot") {
    console.log(`test prerequisites: ${absent.join(", ")} missing and ${plan.why} here to install them.`);
    if (plan.commands.length > 0) console.log(`test prerequisites: to install them yourself: ${shown(plan.commands)}`);
  } else if (plan.kind === "run") {
    const env = Object.entries(CLEAN_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ");
    if (dryRun) {
      console.log(`test prerequisites (dry run): would run ${shown(plan.commands)}`);
      console.log(`test prerequisites (dry run): with only this environment: ${env}`);
      return;
    }
    console.log(
      `test prerequisites: installing the Debian packages ${absent.join(", ")} (${plan.as === "root" ? "as root" : "with sudo -n"}) for the TUI, browser, clock and confinement tests.`,
    );
    installed = plan.commands.every((c) => {
      const [cmd, ...args] = c as [string, ...string[]];
      return spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], env: { ...CLEAN_ENV } }).status === 0;
    });
    if (!installed)
      console.log(`test prerequisites: the install did not succeed (sudo -n never asks for a password); to install them yourself: ${shown(plan.commands)}`);
  }
  const still = absentPackages();
  if (still.length > 0)
    console.log(
      `test prerequisites: ${still.join(", ")} not installed${installed ? " (the install did not provide them)" : ""}: ` +
        "the tests that drive them are SKIPPED (their names say so); the rest run. Install them and run npm test again for the full suite.",
    );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
