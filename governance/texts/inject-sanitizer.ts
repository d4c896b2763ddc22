/**
 * Validation of user guidance before it is injected into a running session (seed 000 `validateInjectText`).
 *
 * Guidance comes from a human through the CLI or dashboard, but also through a primary agent's tool, whose arguments
 * a prompt injection may control. So the text is cleaned to what a human would type: invisible characters go,
 * tool-call-like payloads go, and phrases that try to re-role the model or forge our own directives are replaced by
 * a visible marker (never silently dropped, so the reader sees that something was there). The result is still
 * fenced as data by `buildInjectBlock`; this is a second line of defence, not the only one.
 *
 * Tradeoffs: patterns are chosen for precision so ordinary guidance passes unchanged ("Ignore the flaky test",
 * "use the system package manager"); homoglyph spellings (Cyrillic letters) are not caught. Length is counted in
 * Unicode code points, so an emoji is never cut in half.
 */

export interface InjectValidation {
  /** False only when nothing meaningful (no letter or digit outside markers) is left after sanitation. */
  valid: boolean;
  sanitized: string;
  warnings: string[];
}

export const REMOVED_TOOL_CALL = "[removed: tool-call]";
export const REMOVED_MANIPULATION = "[removed: prompt-manipulation]";
export const REMOVED_FORGED = "[removed: forged-directive]";

/** C0/C1 controls except tab and newline, soft hyphen, zero-width, bidi controls, BOM, Unicode tag characters. */
const INVISIBLE =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|[\u{E0000}-\u{E007F}]/gu;

const TOOL_TAG_BLOCK =
  /<\s*(?:[\w-]+:)?(tool_calls?|tool_use|function_calls?|invoke)\b[^>]*>[\s\S]*?(?:<\/\s*(?:[\w-]+:)?\1\s*>|$)/gi;
const TOOL_TAG_STRAY = /<\/?\s*(?:[\w-]+:)?(?:tool_calls?|tool_use|tool_result|function_calls?|function_results|invoke)\b[^>]*>/gi;
const TOOL_JSON_HEAD = /^\{\s*["']?(?:action|tool|tool_name|toolName|function|function_call|tool_calls|recipient_name)["']?\s*:/i;
const TOOL_JSON_KEYS = /["'](?:tool_calls|function_call|tool_use)["']\s*:|"type"\s*:\s*"(?:tool_use|function)"/i;
const JSON_NAME = /["']?name["']?\s*:/i;
const JSON_ARGS = /["']?(?:arguments|parameters|args|input)["']?\s*:/i;
const BARE_TOOL_KEY = /["'](?:tool_calls|function_call)["']\s*:/gi;

const MANIPULATION: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?(?:previous|prior|above|earlier|preceding|former|original|system|developer|existing)\s+(?:instructions?|prompts?|rules?|directives?|messages?|context|guidelines?|commands?)\b/gi,
    "override of previous instructions",
  ],
  [/\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:above|before|previously|prior|you(?:'ve| have)\s+been\s+told)\b/gi, "override of previous instructions"],
  [/\b(?:ignore|disregard|bypass)\s+(?:the\s+|your\s+)?system\s+prompt\b/gi, "override of previous instructions"],
  [/\byou\s+are\s+now\s+(?:a|an|the|my|no\s+longer|free|unrestricted|jailbroken|DAN)\b/gi, "role reassignment"],
  [/\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+be|must\s+act\s+as)\b/gi, "role reassignment"],
  [/\b(?:new|updated|real|actual)\s+system\s+(?:prompt|instructions?|message)\b/gi, "fake system prompt"],
  [/^[ \t>]*(?:system|assistant|developer)[ \t]*:/gim, "role prefix"],
  [/^[ \t]*#{1,6}[ \t]*(?:system|assistant|developer)(?:[ \t]+(?:prompt|message|instructions?))?[ \t]*:?[ \t]*$/gim, "role heading"],
  [/<\s*\/?\s*(?:system|assistant|developer|sys|instructions?|system[-_]?prompt|im_start|im_end)\b[^>]*>/gi, "role tag"],
  [/<\|[^|>\n]{1,40}\|>|\[\/?(?:INST|SYS|SYSTEM)\]|<<\/?SYS>>/g, "special token"],
];

const FORGED: readonly RegExp[] = [
  /(?:[\u26A0\u274C\u{1F6D1}\u{1F4DD}\u{1F6A8}]\uFE0F?\s*)?\b(?:SESSION\s+STOP(?:\s+REQUESTED)?|SESSION\s+TERMINATED|SUBAGENT\s+INTERRUPTED|USER\s+GUIDANCE|EMERGENCY_HALT)\b/gu,
  /---\s*(?:ORIGINAL\s+)?TOOL\s+(?:OUTPUT|RESPONSE)\s*---/gi,
  /<\s*\/?\s*governance-context\s*>/gi,
];

/** Index just past the `}` that closes the `{` at `start` (JSON double-quoted strings respected); end of text if none. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i + 1;
  }
  return text.length;
}

function isToolCallObject(obj: string): boolean {
  return TOOL_JSON_HEAD.test(obj) || TOOL_JSON_KEYS.test(obj) || (JSON_NAME.test(obj) && JSON_ARGS.test(obj));
}

/** Replaces each outermost tool-call-like `{…}` (unbalanced: to the end) with a marker. Returns the count. */
function stripToolJson(text: string): { text: string; count: number } {
  let out = "";
  let count = 0;
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf("{", i);
    if (open < 0) break;
    const end = objectEnd(text, open);
    if (isToolCallObject(text.slice(open, end))) {
      out += text.slice(i, open) + REMOVED_TOOL_CALL;
      count++;
      i = end;
    } else {
      out += text.slice(i, open + 1);
      i = open + 1;
    }
  }
  return { text: out + text.slice(i), count };
}

function replaceAll(text: string, pattern: RegExp, marker: string): { text: string; count: number } {
  let count = 0;
  const next = text.replace(pattern, () => {
    count++;
    return marker;
  });
  return { text: next, count };
}

/**
 * Cleans guidance text. Order matters: invisible characters go first so they cannot split a pattern
 * ("ig\u200Bnore previous instructions"); truncation comes last so removals free room for real content.
 */
export function validateInjectText(text: string, options: { maxLength?: number } = {}): InjectValidation {
  const maxLength = options.maxLength ?? 500;
  const warnings: string[] = [];
  let s = String(text ?? "").replace(/\r\n?/g, "\n");

  const invisible = s.match(INVISIBLE)?.length ?? 0;
  if (invisible > 0) {
    s = s.replace(INVISIBLE, "");
    warnings.push(`removed ${invisible} invisible or control character${invisible === 1 ? "" : "s"}`);
  }
  const scanLimit = Math.max(2_000, maxLength * 4);
  if (s.length > scanLimit) {
    s = Array.from(s).slice(0, scanLimit).join("");
    warnings.push(`input longer than ${scanLimit} characters was cut before checking`);
  }

  let toolCalls = 0;
  for (const pattern of [TOOL_TAG_BLOCK, TOOL_TAG_STRAY]) {
    const r = replaceAll(s, pattern, REMOVED_TOOL_CALL);
    s = r.text;
    toolCalls += r.count;
  }
  const json = stripToolJson(s);
  const bare = replaceAll(json.text, BARE_TOOL_KEY, REMOVED_TOOL_CALL);
  s = bare.text;
  toolCalls += json.count + bare.count;
  if (toolCalls > 0) warnings.push(`removed tool-call-like content (${toolCalls})`);

  const kinds = new Set<string>();
  for (const [pattern, kind] of MANIPULATION) {
    const r = replaceAll(s, pattern, REMOVED_MANIPULATION);
    s = r.text;
    if (r.count > 0) kinds.add(kind);
  }
  if (kinds.size > 0) warnings.push(`neutralized prompt-manipulation pattern: ${[...kinds].join(", ")}`);

  let forged = 0;
  for (const pattern of FORGED) {
    const r = replaceAll(s, pattern, REMOVED_FORGED);
    s = r.text;
    forged += r.count;
  }
  if (forged > 0) warnings.push("neutralized text imitating a governance directive or marker");

  s = s.replace(/[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n").trim();

  const chars = Array.from(s);
  if (chars.length > maxLength) {
    s = chars.slice(0, maxLength).join("").trimEnd();
    warnings.push(`truncated from ${chars.length} to ${maxLength} characters`);
  }

  const meaningful = s.split(/\[removed: [a-z-]+\]/).join("");
  return { valid: /[\p{L}\p{N}]/u.test(meaningful), sanitized: s, warnings };
}
