import { isFlaggedLine, markDirectives } from "../text-safety/untrusted-text.ts";
import { stripControls, stripInvisible } from "../text-safety/text-hygiene.ts";
import type { DirectiveKind } from "../text-safety/directive-detector.ts";

/**
 * Validation of user guidance before it is queued and again before it is delivered (seed 000 `validateInjectText`).
 *
 * Guidance comes from a human through the CLI or dashboard, but also through a primary agent's tool, whose arguments
 * a prompt injection may control. Policy: *render as data, do not delete*. Only characters nobody can see are removed
 * (controls, zero-width and bidi controls, tag characters, variation-selector runs, fillers: see `stripInvisible`);
 * every line that reads as a system or governance instruction is kept but marked `[flagged: kind] "…"` (see
 * `markDirectives`), and the whole text is then fenced as data by `buildInjectBlock`. Benign guidance — code, paths,
 * diffs, JSON, any script with its ZWJ/ZWNJ, emoji sequences — comes out unchanged apart from surrounding whitespace.
 *
 * Length is counted in Unicode code points (an emoji is never cut in half) and applied before marking, so the
 * marking never pushes the user's own text over the limit. Idempotent: validating the result again changes nothing.
 */

export interface InjectValidation {
  /**
   * False only when nothing visible is left. A text whose every line is flagged is still valid: it is delivered as
   * flagged, quoted data (render as data rather than delete), and the warnings tell the sender.
   */
  valid: boolean;
  sanitized: string;
  warnings: string[];
  /** The kind of each flagged line. */
  flagged: DirectiveKind[];
}

export function validateInjectText(text: string, options: { maxLength?: number } = {}): InjectValidation {
  const maxLength = options.maxLength ?? 500;
  const warnings: string[] = [];
  const raw = stripControls(String(text ?? ""));
  const controls = String(text ?? "").replace(/\r\n?/g, "\n").length - raw.length;
  const invisible = stripInvisible(raw);
  // Lines this module flagged before (a queued text validated again on delivery) are unmarked first, so the length
  // limit counts the user's own characters and marking again gives the same result.
  let s = unmarkFlagged(invisible.text);
  const removed = controls + invisible.removed;
  if (removed > 0) warnings.push(`removed ${removed} invisible or control character${removed === 1 ? "" : "s"}`);

  s = s
    .replace(/[ \t]+$/gm, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  const length = Array.from(s).length;
  if (length > maxLength) {
    s = truncateAtGrapheme(s, maxLength).trimEnd();
    warnings.push(`truncated from ${length} to ${maxLength} characters`);
  }

  const marked = markDirectives(s);
  s = marked.text;
  if (marked.flagged.length > 0) {
    warnings.push(
      `flagged ${marked.flagged.length} line${marked.flagged.length === 1 ? "" : "s"} that read as a system or governance instruction (${[...new Set(marked.flagged)].join(", ")}); delivered as quoted data`,
    );
  }
  const valid = VISIBLE.test(s);
  return { valid, sanitized: s, warnings, flagged: marked.flagged };
}

/**
 * A character someone can see: not white space, not a format, control or combining character on its own, and not one
 * of the letters and symbols that render blank (Hangul fillers, the blank Braille pattern, musical null notehead and
 * the invisible beam/tie/slur controls). Guidance made only of such characters is refused like an empty one.
 */
const VISIBLE = /[^\s\p{Cf}\p{Cc}\p{Mn}\p{Me}\p{Zs}\u115F\u1160\u3164\uFFA0\u2800\u{1D159}\u{1D173}-\u{1D17A}]/u;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * The longest prefix of at most `max` code points that ends on a grapheme boundary. Counting code points (not
 * graphemes) keeps a zalgo cluster of thousands of marks from slipping past the limit; cutting only between graphemes
 * keeps a flag, a ZWJ emoji or a conjunct from being split into a fragment that a second pass would change.
 */
function truncateAtGrapheme(text: string, max: number): string {
  let out = "";
  let count = 0;
  for (const { segment } of graphemes.segment(text)) {
    const n = Array.from(segment).length;
    if (count + n > max) break;
    out += segment;
    count += n;
  }
  return out;
}

function unmarkFlagged(text: string): string {
  return text
    .split("\n")
    .map((line) => (isFlaggedLine(line) ? (JSON.parse(line.slice(line.indexOf("] ") + 2)) as string) : line))
    .join("\n");
}
