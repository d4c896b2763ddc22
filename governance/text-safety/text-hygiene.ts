/**
 * Character-level hygiene for every text governance stores, prints or puts before a model: terminal controls,
 * invisible "smuggling" characters, and secrets. Pure functions; no pattern here changes visible, benign content.
 */

/** C0 and C1 controls (incl. ESC, BEL, DEL, NEL) except tab and newline. Terminal escape sequences start with them. */
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

/** Whole terminal escape sequences (CSI, OSC, two-byte ESC), so no "[31m" remnant is left behind. */
const ANSI = /\u001B\[[0-?]*[ -/]*[@-~]|\u001B\][^\u0007\u001B]*(?:\u0007|\u001B\\)?|\u009B[0-?]*[ -/]*[@-~]|\u001B[@-Z\\-_]/g;

/** Strips C0/C1 controls; with `keepNewlines: false` tab and newline go too (single-line values). */
export function stripControls(text: string, options: { keepNewlines?: boolean } = {}): string {
  const s = String(text ?? "")
    .replace(ANSI, "")
    .replace(/\r\n?|[\u000B\u000C\u0085\u2028\u2029]/g, "\n");
  return options.keepNewlines === false ? s.replace(CONTROLS, "").replace(/[\t\n]/g, " ") : s.replace(CONTROLS, "");
}

/**
 * Invisible and format characters with no place in guidance a human types, each a known smuggling channel: soft
 * hyphen, zero-width space/no-break, word joiner and invisible operators, bidi embeddings/overrides/isolates and the
 * LRM/RLM/ALM marks (U+061C), BOM, Mongolian vowel separator, combining grapheme joiner, Hangul fillers (U+115F,
 * U+1160, U+3164, U+FFA0), Khmer inherent vowels, braille blank, interlinear annotation marks, deprecated format
 * controls. ZWJ (U+200D) and ZWNJ (U+200C) are NOT here: emoji sequences, Persian and Hindi need them.
 */
const INVISIBLE =
  /^(?:[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B\u200E\u200F\u202A-\u202E\u2060-\u206F\u2800\u3164\uFEFF\uFFA0\uFFF9-\uFFFB]|[\u{1D173}-\u{1D17A}])$/u;
/** Variation selectors: FE00–FE0F and the supplement E0100–E01EF. */
const VARIATION = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;
/** A valid emoji tag sequence (subdivision flags such as Scotland): black flag, 2–6 tag letters/digits, cancel tag. */
const TAG_SEQUENCE = /\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{2,6}\u{E007F}/uy;

/** Unicode whitespace other than tab/newline/space (NBSP, en/em spaces, ideographic space…) becomes a plain space. */
const ODD_SPACES = /[\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]/g;

/**
 * Removes invisible smuggling characters while keeping what real text needs: ZWJ/ZWNJ, one variation selector after
 * a visible character (emoji presentation "⚠️", keycaps "1️⃣", an ideographic variant after a Han character), and
 * well-formed emoji tag sequences (🏴 subdivision flags). Runs of variation selectors (a byte-smuggling channel),
 * text-style selectors after ASCII letters, and stray tag characters (invisible ASCII) are removed.
 * Returns the cleaned text and how many characters were removed.
 */
export function stripInvisible(text: string): { text: string; removed: number } {
  let removed = 0;
  const out: string[] = [];
  let prev = "";
  let prevWasSelector = false;
  let i = 0;
  while (i < text.length) {
    TAG_SEQUENCE.lastIndex = i;
    const flag = TAG_SEQUENCE.exec(text);
    if (flag) {
      out.push(flag[0]);
      i += flag[0].length;
      prev = flag[0];
      prevWasSelector = false;
      continue;
    }
    const cp = text.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    if ((cp >= 0xe0000 && cp <= 0xe007f) || INVISIBLE.test(ch)) {
      removed++;
      continue;
    }
    if (VARIATION.test(ch)) {
      const emojiSelector = cp === 0xfe0e || cp === 0xfe0f;
      const ideographic = cp >= 0xe0100 && /\p{Script=Han}/u.test(prev);
      const keep = !prevWasSelector && prev !== "" && !/[A-Za-z\s]/.test(prev) && (emojiSelector || ideographic);
      if (keep) out.push(ch);
      else removed++;
      prevWasSelector = true;
      continue;
    }
    out.push(ch);
    prev = ch;
    prevWasSelector = false;
  }
  return { text: out.join(""), removed };
}

/** Plain printable text: controls and invisible characters removed, odd spaces made plain. Newlines kept. */
export function printable(text: string): string {
  return stripInvisible(stripControls(text)).text.replace(ODD_SPACES, " ");
}

export const REDACTED = "[redacted]";

/**
 * Token-like secrets, each replaced by {@link REDACTED} (the key name before a `=`/`:` is kept so the reader knows
 * what was there). Chosen for precision: a commit hash or a UUID is not a secret and stays.
 */
const SECRETS: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${REDACTED}`],
  [
    /\b(authorization|proxy-authorization|x-api-key|api-key|private-token)(\s*[:=]\s*)(?!\[redacted\]|(?:Bearer|Basic|Token)\b)("?)[^\s"',;]{6,}\3/gi,
    `$1$2${REDACTED}`,
  ],
  [/\b(sk|rk|pk)-(?:live-|test-|proj-|ant-)?[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, REDACTED],
  [/\bglpat-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\bnpm_[A-Za-z0-9]{30,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [
    /\b([A-Za-z0-9_]*(?:password|passwd|pwd|secret|token|api_?key|access_?key|auth_?key|client_?secret|credentials?)[A-Za-z0-9_]*)(\s*[=:]\s*)(?!\[redacted\])("?)[^\s"',;&]{3,}\3/gi,
    `$1$2${REDACTED}`,
  ],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]{3,}@/gi, `$1${REDACTED}@`],
];

/** Replaces token-like secrets (bearer tokens, sk-…, ghp_…/github_pat_…, AWS keys, password=…, api_key=…, URL passwords). */
export function redactSecrets(text: string): string {
  let s = String(text ?? "");
  for (const [pattern, replacement] of SECRETS) s = s.replace(pattern, replacement);
  return s;
}
