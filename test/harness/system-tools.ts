import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * The system programs some user-facing tests drive (README "Prerequisites"): the OpenCode terminal UI runs in
 * `tmux`, the dashboard in Debian's `chromium` (playwright-core cannot download a browser here), the long-lived
 * resume test moves a running server's wall clock with libfaketime (Debian `faketime`), and the confinement tests
 * need bubblewrap (Debian `bubblewrap`, `bwrap`). `npm test` installs the
 * missing ones first when it can (scripts/test-prerequisites.ts); when it cannot, the tests that need one are
 * skipped with the reason in their name, never failed for a machine's sake and never silently.
 */
const chromium = () => ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((f) => fs.existsSync(f));
const libfaketime = () =>
  ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1"].find(
    (f) => fs.existsSync(f),
  );

/** As found when the test file loaded. */
export const CHROMIUM = chromium();
export const LIBFAKETIME = libfaketime();

/** True when `program` is on PATH. */
export function onPath(program: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The Debian package that provides what is missing, for the skip reason: "" when nothing is. Looked up now. */
export function missing(...needs: ("tmux" | "chromium" | "faketime" | "bubblewrap")[]): string {
  const absent = needs.filter((n) =>
    n === "tmux" ? !onPath("tmux") : n === "chromium" ? !chromium() : n === "bubblewrap" ? !onPath("bwrap") : !libfaketime(),
  );
  return absent.length === 0 ? "" : `SKIPPED: Debian package ${absent.join(", ")} not installed (npm test installs it when it can: see README Prerequisites)`;
}

/**
 * A PATH with every program of this one but bubblewrap — a folder of links, the first name wins — for the tests of
 * what governance does where no sandbox can run (issue 41).
 */
export function pathWithoutBwrap(root: string): string {
  const farm = path.join(root, "bin-without-bwrap");
  fs.mkdirSync(farm, { recursive: true });
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const link = path.join(farm, name);
      if (name !== "bwrap" && !fs.existsSync(link)) fs.symlinkSync(path.join(dir, name), link);
    }
  }
  return farm;
}
