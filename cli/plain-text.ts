/**
 * Output-layer hygiene for everything the CLI prints and the dashboard renders. Texts in records and audit lines
 * come from models, tools and hand-edited files; the writers clean them at the source, and this layer strips C0/C1
 * control characters again before they reach a terminal or a page (defence in depth: an ESC or BEL sequence must
 * never be interpreted by the user's terminal). Tabs and line breaks inside a value become spaces.
 */
import { displayText, mapStrings } from "../governance/texts/display-text.ts";

const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * One value on one line: tab/CR/LF turned into spaces, then the shared output filter (governance/texts/display-text.ts:
 * controls, escape sequences, bidi overrides and invisible characters removed).
 */
export function plain(value: unknown): string {
  return displayText(String(value ?? "").replace(/[\t\r\n]/g, " ")).replace(CONTROLS, "");
}

/** A block of lines: each line cleaned with {@link plain}, the line breaks kept. */
export function plainLines(text: string): string {
  return text.split("\n").map(plain).join("\n");
}

/** A JSON-able value with every string (keys included) cleaned; numbers, booleans and null as they are. */
export function plainDeep<T>(value: T): T {
  return mapStrings(value, plain);
}
