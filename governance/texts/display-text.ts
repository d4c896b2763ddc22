import { printable } from "../text-safety/text-hygiene.ts";

/**
 * The one output filter for every surface a human or a program reads (issue 20 §4): the CLI's text and `--json`
 * (`sessions`, `log`, `status`, …), the dashboard's API and page, and OpenTelemetry attributes (issue 18: export
 * them through here). Removes C0/C1 controls and whole terminal escape sequences, and the invisible and bidi
 * characters of {@link printable} (U+202A–U+202E embeddings/overrides, U+2066–U+2069 isolates, LRM/RLM/ALM,
 * zero-width spaces, BOM …) that would make an agent name read reversed or hide text; ZWJ/ZWNJ, emoji presentation
 * and newlines are kept (a caller that needs one line collapses them). Texts a model reads go through
 * untrusted-text.ts, which applies the same hygiene and more.
 *
 * Fast path: pure printable ASCII is returned as is (no allocation), so filtering a whole snapshot stays cheap.
 */
export function displayText(value: string): string {
  return /^[\x20-\x7E\n]*$/.test(value) ? value : printable(value);
}

/** A JSON-able value with every string (object keys included) passed through `filter`; other values as they are. */
export function mapStrings<T>(value: T, filter: (text: string) => string): T {
  if (typeof value === "string") return filter(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, filter)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [filter(k), mapStrings(v, filter)])) as T;
  }
  return value;
}

/** A JSON-able value with every string (object keys included) passed through {@link displayText}. */
export function displayDeep<T>(value: T): T {
  return mapStrings(value, displayText);
}
