import { displayDeep } from "../governance/texts/display-text.ts";
import { plainLines } from "./plain-text.ts";

/** What commands write to. `doctor` and `init` take the plain two-function form; the rest use {@link Output}. */
export type Io = { out: (s: string) => void; err: (s: string) => void };

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "cyan";
/** A piece of a line: plain text, or text with a style. Both are stripped of control characters before printing. */
export type Part = string | readonly [Style, string];

const SGR: Record<Style, [string, string]> = {
  bold: ["\u001b[1m", "\u001b[22m"],
  dim: ["\u001b[2m", "\u001b[22m"],
  red: ["\u001b[31m", "\u001b[39m"],
  green: ["\u001b[32m", "\u001b[39m"],
  yellow: ["\u001b[33m", "\u001b[39m"],
  cyan: ["\u001b[36m", "\u001b[39m"],
};

/**
 * The CLI's one way to print. Every part is cleaned of C0/C1 control characters (so no text from a record, an audit
 * line or a model reaches the terminal as an escape sequence); colour codes are added afterwards, by this module
 * only, and only when the stream is a TTY and `NO_COLOR` is unset or empty (https://no-color.org) and TERM is not
 * `dumb`. Piped output and `--json` never carry ANSI codes.
 */
export type Output = Io & {
  readonly color: boolean;
  line(...parts: Part[]): void;
  errLine(...parts: Part[]): void;
  /** One JSON document (pretty) on stdout, see {@link safeJson}. */
  json(value: unknown): void;
};

export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

function render(parts: Part[], color: boolean): string {
  return parts
    .map((p) => {
      if (typeof p === "string") return plainLines(p);
      const text = plainLines(p[1]);
      return color && text ? `${SGR[p[0]][0]}${text}${SGR[p[0]][1]}` : text;
    })
    .join("");
}

/**
 * A writer that drops what nobody reads any more: once the stream's reader went away (`log | head`, `status | head`:
 * EPIPE), the rest of the output is dropped and the command ends as it would have — quietly, its own exit code (0
 * for a listing), no stack trace, and a write it had begun (a budget raise, a queued stop) still completes. Any other
 * write error is still thrown.
 */
export function quietWriter(stream: NodeJS.WriteStream): (text: string) => void {
  let readerGone = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    readerGone = true;
  });
  return (text) => {
    if (!readerGone && !stream.destroyed) stream.write(text);
  };
}

export function createOutput(opts: { stdout?: NodeJS.WriteStream; stderr?: NodeJS.WriteStream; env?: NodeJS.ProcessEnv } = {}): Output {
  const stdout = opts.stdout ?? process.stdout;
  const stderr = opts.stderr ?? process.stderr;
  const write = quietWriter(stdout);
  const writeErr = quietWriter(stderr);
  const env = opts.env ?? process.env;
  const color = colorEnabled(stdout, env);
  const errColor = colorEnabled(stderr, env);
  return {
    color,
    out: (s) => write(`${render([s], false)}\n`),
    err: (s) => writeErr(`${render([s], false)}\n`),
    line: (...parts) => write(`${render(parts, color)}\n`),
    errLine: (...parts) => writeErr(`${render(parts, errColor)}\n`),
    json: (value) => write(`${safeJson(value, 2)}\n`),
  };
}

/**
 * JSON whose text contains no raw control character: JSON.stringify escapes C0 but leaves DEL and C1 (U+007F–U+009F)
 * raw, which some terminals act on; they are written as `\\u00XX` escapes (the parsed value is the same). Every string
 * passes the shared output filter first (display-text.ts: no bidi override or invisible character in `--json` either).
 */
export function safeJson(value: unknown, indent?: number): string {
  return JSON.stringify(displayDeep(value), null, indent).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
