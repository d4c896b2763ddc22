/**
 * Printing for the demo: one line per thing that happened, stamped with the time since the demo started, session ids
 * shortened to their last characters, quoted text indented under the line that introduces it.
 */
const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: string) => (s: string) => (color ? `\u001b[${code}m${s}\u001b[0m` : s);
export const dim = paint("2");
export const bold = paint("1");
export const green = paint("32");
export const red = paint("31");
export const yellow = paint("33");
export const cyan = paint("36");

/** `ses_…` ids are time-ordered: the first characters are the same for every session of a run, so show the tail. */
export function short(id: string | null | undefined): string {
  if (!id) return "-";
  return id.startsWith("ses_") ? `ses…${id.slice(-6)}` : id;
}

/** Replaces every session id in a text by its short form (for quoting texts the model received). */
export function shortenIds(text: string): string {
  return text.replace(/ses_[A-Za-z0-9]{8,64}/g, (id) => short(id));
}

export type SceneResult = { n: number; title: string; ok: boolean; reason?: string; ms: number };

export class Timeline {
  readonly started = Date.now();
  readonly results: SceneResult[] = [];

  stamp(): string {
    return dim(`+${((Date.now() - this.started) / 1000).toFixed(1).padStart(5)}s`);
  }

  /** One event. */
  line(text: string): void {
    console.log(`${this.stamp()}  ${text}`);
  }

  /** Text the model (or a user) saw, indented and clipped to `maxLines`. */
  quote(text: string, maxLines = 12): void {
    const lines = shortenIds(text).replace(/\s+$/, "").split("\n");
    const shown = lines.slice(0, maxLines);
    for (const l of shown) console.log(`          ${dim("│")} ${l.length > 150 ? `${l.slice(0, 149)}…` : l}`);
    if (lines.length > shown.length) console.log(`          ${dim(`│ … ${lines.length - shown.length} more line(s)`)}`);
  }

  heading(n: number, title: string): void {
    console.log("");
    console.log(bold(cyan(`── ${n}. ${title} ${"─".repeat(Math.max(3, 70 - title.length))}`)));
  }

  /** Runs one scene; a failure is printed and recorded, and the demo goes on. */
  async scene(n: number, title: string, body: () => Promise<void>): Promise<boolean> {
    this.heading(n, title);
    const t0 = Date.now();
    try {
      await body();
      this.results.push({ n, title, ok: true, ms: Date.now() - t0 });
      this.line(green(`✓ scene ${n} (${((Date.now() - t0) / 1000).toFixed(1)} s)`));
      return true;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.results.push({ n, title, ok: false, reason, ms: Date.now() - t0 });
      this.line(red(`✗ scene ${n}: ${reason.split("\n")[0]}`));
      const rest = reason.split("\n").slice(1).join("\n").trim();
      if (rest) this.quote(rest, 8);
      return false;
    }
  }
}

/** A scene's expectation: throws the user-facing reason when it does not hold. */
export function expect(condition: unknown, whatDidNotHappen: string): asserts condition {
  if (!condition) throw new Error(whatDidNotHappen);
}

/** A fixed-width text table. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r, ri) => {
    const line = r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
    return ri === 0 ? bold(line) : line;
  });
}
