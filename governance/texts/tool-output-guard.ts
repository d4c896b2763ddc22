import { detectDirective } from "../text-safety/directive-detector.ts";
import { flagLine, isFlaggedLine } from "../text-safety/untrusted-text.ts";

/**
 * What a tool produced (a file `read`, a command's output, a fetched page, a subagent's final answer in a `task`
 * result) before the model sees it, issue 20 §1:
 * - the session's seal is removed wherever it occurs (any case), so only governance's own text carries it;
 * - a line that imitates a governance directive, a guidance fence or a governance heading is marked
 *   `[flagged: <kind>] "<the line>"` (untrusted-text.ts), every other line is left byte for byte.
 *
 * Cost: the detector is thorough (~0.1 ms a line) so it only sees *candidate* lines, found by one native regex pass
 * over the text: lines with a directive emoji, `<<`, one of governance's words, or letters from the scripts the
 * detector folds (Cyrillic, Greek, full-width). At most {@link MAX_DETECTED} candidates are run through the detector;
 * after that a candidate with a directive emoji or governance's exact words is flagged without it (safe side). A
 * typical output (a few KB) costs well under a millisecond; 10 MB about 10 ms (the scan stops at {@link MAX_SCANNED}).
 */

const EMOJI = "\\u26A0\\u274C\\u{1F6D1}\\u{1F6A8}\\u26D4\\u{1F4DD}\\u2757\\u203C\\u{1F6AB}";
const WORDS = "session|subagent|guidance|untrusted|governance|governed|tool.{0,3}(?:output|result|response)|seal|flagged|directive|terminated";
/** Something that makes a line worth the detector's time: our vocabulary, or a look-alike script it folds. */
const MARK = new RegExp(`[${EMOJI}]|<<|${WORDS}|[\\u0370-\\u03FF\\u0400-\\u04FF\\u1D00-\\u1DBF\\uFF01-\\uFF5E]`, "giu");
const VOCABULARY = new RegExp(`[${EMOJI}]|<<|${WORDS}`, "iu");
/** Flagged without the detector once the budget is spent. */
const OBVIOUS = new RegExp(`[${EMOJI}]|<<\\s*(?:end\\s+)?untrusted|session\\s*(?:stop|terminated)|subagent\\s*interrupted|user\\s*guidance`, "iu");
/** Detector runs per output: for lines with governance's vocabulary, and for lines only in a look-alike script. */
export const MAX_DETECTED = 200;
export const MAX_DETECTED_SCRIPT = 32;
/** Lines are looked for in the first 1 MiB (OpenCode's own tools return at most ~50 KB; the seal is removed everywhere). */
export const MAX_SCANNED = 1 << 20;

export interface GuardResult {
  output: string;
  /** Lines marked, and whether the seal was found (and removed). */
  flagged: number;
  sealRemoved: boolean;
}

export function guardToolOutput(output: string, seal: string | undefined): GuardResult {
  let text = output;
  let sealRemoved = false;
  if (seal) {
    const hex = new RegExp(seal.slice("seal:".length), "gi");
    if (hex.test(text)) {
      text = text.replace(hex, "[seal removed]");
      sealRemoved = true;
    }
  }
  let flagged = 0;
  let budget = MAX_DETECTED;
  let scriptBudget = MAX_DETECTED_SCRIPT;
  const parts: string[] = [];
  let done = 0;
  MARK.lastIndex = 0;
  for (let m = MARK.exec(text); m !== null; m = MARK.exec(text)) {
    if (m.index >= MAX_SCANNED) break;
    const start = text.lastIndexOf("\n", m.index) + 1;
    const nl = text.indexOf("\n", m.index);
    const end = nl === -1 ? text.length : nl;
    MARK.lastIndex = end;
    const line = text.slice(start, end);
    if (isFlaggedLine(line)) continue;
    let kind: string | null = null;
    if (VOCABULARY.test(line)) kind = budget-- > 0 ? detectDirective(line) : OBVIOUS.test(line) ? "forged-directive" : null;
    else if (scriptBudget-- > 0) kind = detectDirective(line);
    if (!kind) continue;
    flagged++;
    parts.push(text.slice(done, start), flagLine(line, kind));
    done = end;
    if (end === text.length) break;
  }
  if (flagged === 0) return { output: text, flagged, sealRemoved };
  parts.push(text.slice(done));
  return { output: parts.join(""), flagged, sealRemoved };
}
