/**
 * `npm test` runs this first (pretest): the system programs the user-facing tests drive — tmux (the OpenCode TUI),
 * chromium (the dashboard in a browser) and faketime (a long-lived server's wall clock moved) — are installed from
 * Debian's packages when missing, as root or with sudo, and the run says so. Where that is not possible (no apt-get,
 * no root and no sudo, or the install fails) it says which tests will be skipped and goes on: a newcomer's
 * `npm install && npm test` never fails for a missing browser. OPENCODE_GOVERNANCE_NO_APT=1 turns the install off.
 */
import { spawnSync } from "node:child_process";
import { missing, onPath } from "../test/harness/system-tools.ts";

const PACKAGES = ["tmux", "chromium", "faketime"] as const;
const absent = PACKAGES.filter((p) => missing(p) !== "");

function run(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } }).status === 0;
}

if (absent.length > 0) {
  const root = process.getuid?.() === 0;
  // sudo may ask for a password on a terminal; without one (CI, a pipe) it must not wait for it (-n).
  const sudo = root ? [] : onPath("sudo") ? (process.stdin.isTTY ? ["sudo"] : ["sudo", "-n"]) : undefined;
  let installed = false;
  if (process.env.OPENCODE_GOVERNANCE_NO_APT === "1") {
    console.log("test prerequisites: OPENCODE_GOVERNANCE_NO_APT=1, not installing anything.");
  } else if (!onPath("apt-get") || sudo === undefined) {
    console.log(`test prerequisites: ${absent.join(", ")} missing and ${onPath("apt-get") ? "neither root nor sudo" : "no apt-get"} here to install them.`);
  } else {
    console.log(
      `test prerequisites: installing the Debian packages ${absent.join(", ")} (${root ? "as root" : "with sudo"}) for the TUI, browser and clock tests.`,
    );
    const [cmd, ...pre] = [...sudo, "apt-get"];
    installed = run(cmd as string, [...pre, "update", "-qq"]) && run(cmd as string, [...pre, "install", "-y", "-qq", "--no-install-recommends", ...absent]);
  }
  const still = PACKAGES.filter((p) => missing(p) !== "");
  if (still.length > 0)
    console.log(
      `test prerequisites: ${still.join(", ")} not installed${installed ? " (the install did not provide them)" : ""}: ` +
        "the tests that drive them are SKIPPED (their names say so); the rest run. Install them and run npm test again for the full suite.",
    );
}
