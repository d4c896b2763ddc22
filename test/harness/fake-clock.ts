import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { LIBFAKETIME } from "./system-tools.ts";

export type FakeClock = {
  /** The environment that puts an OpenCode process on this clock (pass it as `serveEnv`). */
  env(): NodeJS.ProcessEnv;
  /** Hours the clock is ahead now. */
  offsetHours(): number;
  /** Moves the clock `hours` further ahead: the process reads it at its next clock read. */
  later(hours: number): void;
};

/**
 * A wall clock the test moves, for the OpenCode processes started with its `env()`: libfaketime (Debian `faketime`)
 * preloaded into the Bun binary, an offset in a file the process re-reads at every clock read (FAKETIME_NO_CACHE), the
 * monotonic clock left alone so timers and timeouts behave. Nothing is patched on disk: OpenCode and the plugin both see
 * the later time. Call it at describe level before `e2eHost`, whose server then starts on it.
 */
export function e2eFakeClock(): FakeClock {
  let file = "";
  let offset = 0;
  beforeAll(() => {
    if (!LIBFAKETIME) throw new Error("libfaketime not found: install Debian `faketime`");
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ocg-faketime-")), "offset");
    fs.writeFileSync(file, "+0h\n");
  });
  afterAll(() => {
    if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
  return {
    env: () => ({ LD_PRELOAD: LIBFAKETIME, FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: "1", FAKETIME_DONT_FAKE_MONOTONIC: "1" }),
    offsetHours: () => offset,
    later: (hours) => {
      offset += hours;
      fs.writeFileSync(file, `+${offset}h\n`);
    },
  };
}
