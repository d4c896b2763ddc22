import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { OPENCODE_BIN } from "./paths.ts";
import type { TestProject } from "./test-project.ts";

/**
 * The real `opencode` terminal UI inside a detached tmux server, driven as a person would: `type` and `press` send
 * keys, `screen()` reads what is on the terminal. One tmux server (own socket) per TUI, so tests never share one and
 * `kill()` ends exactly what it started.
 */
export type Tui = {
  /** The text on the terminal now (no colours). */
  screen(): string;
  /** Types literal text (no key names interpreted). */
  type(text: string): void;
  /** Presses keys by tmux name: "Enter", "Escape", "C-c", … */
  press(...keys: string[]): void;
  /** Clicks the left button at a screen cell (0-based column and row of `screen()`), as an SGR mouse press and release. */
  click(column: number, row: number): void;
  /** Types a prompt, waits until the input shows it, presses Enter. */
  submit(text: string): Promise<void>;
  /**
   * Runs a slash command as a person does: types `/name`, waits for it in the command list, then either presses Enter
   * on it (no arguments) or types a space (which closes the list) and the arguments, and presses Enter.
   */
  command(name: string, args?: string): Promise<void>;
  /** Polls the screen until `pattern` shows; the error carries the last screen. */
  waitForScreen(pattern: RegExp | string, what: string, timeoutMs?: number): Promise<string>;
  /** True once the opencode process has exited (the pane stays, dead, so its last screen can still be read). */
  exited(): boolean;
  waitForExit(timeoutMs?: number): Promise<void>;
  kill(): void;
};

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const servers = new Set<string>();
let seq = 0;

/** tmux leaves its socket file behind after kill-server; the harness removes the ones it made. */
function removeSocket(socket: string): void {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  fs.rmSync(path.join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${uid}`, socket), { force: true });
}

function tmux(socket: string, args: string[], env?: NodeJS.ProcessEnv): string {
  return execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: env ?? { PATH: process.env.PATH, TERM: "xterm-256color" } });
}

/** Kills every tmux server this harness started (also registered for process exit). */
export function killAllTuis(): void {
  for (const s of servers) {
    try {
      tmux(s, ["kill-server"]);
    } catch {
      // already gone
    }
    removeSocket(s);
  }
  servers.clear();
}
process.once("exit", killAllTuis);

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Starts `opencode [args]` (the TUI: no `run`/`serve`) in the project, on a 200×50 terminal: the project's own binary. */
export function startTui(project: TestProject, args: string[], opts: { env?: NodeJS.ProcessEnv; cols?: number; rows?: number } = {}): Tui {
  const socket = `ocg-tui-${process.pid}-${++seq}`;
  const env: NodeJS.ProcessEnv = { ...project.env, ...opts.env, TERM: "xterm-256color" };
  const bin = project.host.line === 2 ? project.host.bin : OPENCODE_BIN;
  const command = `exec ${[bin, ...args].map(shellQuote).join(" ")}`;
  servers.add(socket);
  // A server of our own with no user config; the pane stays after opencode exits so the last screen can be read.
  tmux(
    socket,
    [
      "-f",
      "/dev/null",
      "start-server",
      ";",
      "set-option",
      "-g",
      "remain-on-exit",
      "on",
      ";",
      "new-session",
      "-d",
      "-s",
      "tui",
      "-x",
      String(opts.cols ?? 200),
      "-y",
      String(opts.rows ?? 50),
      "-c",
      project.dir,
      command,
    ],
    env,
  );
  const screen = (): string => {
    try {
      return tmux(socket, ["capture-pane", "-p", "-t", "tui"]);
    } catch {
      return "";
    }
  };
  const exited = (): boolean => {
    try {
      return tmux(socket, ["display-message", "-p", "-t", "tui", "#{pane_dead}"]).trim() === "1";
    } catch {
      return true;
    }
  };
  async function poll(check: () => boolean, timeoutMs: number, fail: () => string): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > until) throw new Error(fail());
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  const type = (text: string) => void tmux(socket, ["send-keys", "-t", "tui", "-l", text]);
  const press = (...keys: string[]) => {
    for (const key of keys) tmux(socket, ["send-keys", "-t", "tui", key]);
  };
  async function waitForScreen(pattern: RegExp | string, what: string, timeoutMs = 30_000): Promise<string> {
    let last = "";
    const matches = (s: string) => (typeof pattern === "string" ? s.includes(pattern) : pattern.test(s));
    await poll(
      () => matches((last = screen())),
      timeoutMs,
      () => `timed out after ${timeoutMs} ms waiting for ${what} on the TUI screen; it shows:\n${last}`,
    );
    return last;
  }
  return {
    screen,
    type,
    press,
    click(column, row) {
      const at = `${column + 1};${row + 1}`;
      type(`\x1b[<0;${at}M\x1b[<0;${at}m`);
    },
    waitForScreen,
    async submit(text) {
      type(text);
      await waitForScreen(new RegExp(`┃\\s+${escapeRegExp(text.slice(0, 60))}`), `"${text}" typed into the prompt`);
      press("Enter");
    },
    async command(name, args) {
      const listed = new RegExp(`/${escapeRegExp(name)} {2,}\\S`);
      type(`/${name}`);
      await waitForScreen(listed, `/${name} in the command list`);
      // A built-in command (`new`) runs on Enter in the list; a custom one is only completed there, so close the
      // list with a space instead and submit.
      if (args === undefined) {
        press("Enter");
        return;
      }
      type(" ");
      await poll(
        () => !listed.test(screen()),
        10_000,
        () => `the command list did not close:\n${screen()}`,
      );
      if (args) {
        type(args);
        // A long line wraps inside the prompt box: compare without the spaces, line breaks and the box's left border.
        const squash = (t: string) => t.replace(/[\s┃]+/g, "");
        const typed = squash(`/${name} ${args}`);
        await poll(
          () => squash(screen()).includes(typed),
          30_000,
          () => `/${name} ${args} was not typed into the prompt; the TUI screen shows:\n${screen()}`,
        );
      }
      press("Enter");
    },
    exited,
    async waitForExit(timeoutMs = 15_000) {
      await poll(exited, timeoutMs, () => `the TUI did not exit in ${timeoutMs} ms; it shows:\n${screen()}`);
    },
    kill() {
      try {
        tmux(socket, ["kill-server"]);
      } catch {
        // already gone
      }
      removeSocket(socket);
      servers.delete(socket);
    },
  };
}
