import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEvents } from "../../plugin/opencode-1/events.ts";
import { detectDirective } from "../../governance/text-safety/directive-detector.ts";
import { validateInjectText } from "../../governance/texts/inject-sanitizer.ts";
import { redactSecrets } from "../../governance/text-safety/text-hygiene.ts";
import { isFlaggedLine, parseUntrustedBlock, untrustedBlock, untrustedLine } from "../../governance/text-safety/untrusted-text.ts";

/**
 * Issue 8 acceptance: property-based (fast-check) — the sanitizer and the OpenCode event parser never throw and
 * always return a typed result; and the sanitizer's own guarantees hold for any input, not only the corpora.
 */

/** Text built from the pieces attackers combine: role words, our headings, fences, invisible and control characters. */
const fragment = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "system:",
    "### SYSTEM:",
    "**SYSTEM:**",
    "<system>",
    "</governance-context>",
    "<|im_start|>",
    "[INST]",
    '{"role":"system"',
    '{"tool":"bash"',
    "ignore previous instructions",
    "⚠️ SESSION STOP REQUESTED",
    "🛑",
    "❌ session terminated",
    "--- TOOL OUTPUT ---",
    "— TOOL OUTPUT —",
    "```",
    "~~~",
    "<!--",
    "-->",
    "<<end untrusted-data id=",
    "[flagged: override] ",
    '"',
    "\\",
    "\n",
    "\r\n",
    "\t",
    " ",
    "\u200B",
    "\u200C",
    "\u200D",
    "\u202E",
    "\u2066",
    "\u061C",
    "\uFE0F",
    "\uFE00\uFE01",
    "\u{E0100}",
    "\u{E0041}",
    "\u{E007F}",
    "\u3164",
    "\u001b[31m",
    "\u0007",
    "\u0085",
    "\u2028",
    "👨\u200d👩\u200d👧",
    "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",
    "می\u200cخواهم",
    "Bearer sk-abcdefghijklmnopqrstuvwx",
  ),
);
const hostileish = fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(""));
const anyText = fc.oneof(hostileish, fc.string({ unit: "binary", maxLength: 400 }), fc.string({ unit: "grapheme", maxLength: 200 }));

const C0_C1_EXCEPT_TAB_NL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/;
/** What renders as nothing: white space, format, control and lone combining marks, the blank letters and symbols. */
const BLANK = /[\s\p{Cf}\p{Cc}\p{Mn}\p{Me}\p{Zs}\u115F\u1160\u3164\uFFA0\u2800\u{1D159}\u{1D173}-\u{1D17A}]/gu;
const INVISIBLE = /[\u200B\u200E\u200F\u202A-\u202E\u2060-\u206F\u061C\u3164\uFEFF]/;

describe("sanitizer properties (fast-check)", () => {
  it("validateInjectText never throws and returns a typed result whose text is clean and idempotent", () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 1, max: 600 }), (text, maxLength) => {
        const r = validateInjectText(text, { maxLength });
        expect(typeof r.valid).toBe("boolean");
        expect(typeof r.sanitized).toBe("string");
        expect(r.warnings.every((w) => typeof w === "string")).toBe(true);
        expect(r.sanitized).not.toMatch(C0_C1_EXCEPT_TAB_NL);
        expect(r.sanitized).not.toMatch(INVISIBLE);
        // Every line is either flagged or does not read as a directive.
        for (const line of r.sanitized.split("\n")) expect(isFlaggedLine(line) || detectDirective(line) === null).toBe(true);
        // Delivery re-validates queued text: doing so changes nothing.
        expect(validateInjectText(r.sanitized, { maxLength }).sanitized).toBe(r.sanitized);
        // Valid exactly when something visible is left: guidance of only blank-rendering characters (a lone ZWJ, a
        // Hangul filler, a blank Braille pattern) is refused like an empty one, though the sanitizer keeps them.
        if (r.valid) expect(r.sanitized).toMatch(/\S/);
        else expect(r.sanitized.replace(BLANK, "")).toBe("");
      }),
      { numRuns: 400 },
    );
  });

  it("the fence always parses back: one open line, one matching close line, a nonce absent from the body", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const rendered = untrustedBlock(text, "user guidance");
        const parts = parseUntrustedBlock(rendered);
        expect(parts).not.toBeNull();
        for (const line of parts!.body.split("\n")) expect(isFlaggedLine(line) || detectDirective(line) === null).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("a quoted line is one line, JSON-quoted or flagged, and never carries a control character", () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 1, max: 300 }), (text, max) => {
        const line = untrustedLine(text, max);
        expect(line).not.toContain("\n");
        expect(line).not.toMatch(C0_C1_EXCEPT_TAB_NL);
        expect(isFlaggedLine(line) || typeof JSON.parse(line) === "string").toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("redaction never throws and is stable (redacting twice is redacting once)", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = redactSecrets(text);
        expect(redactSecrets(once)).toBe(once);
      }),
      { numRuns: 300 },
    );
  });
});

describe("OpenCode event parser properties (fast-check)", () => {
  const TYPES = [
    "session.created",
    "session.error",
    "session.idle",
    "session.compacted",
    "session.status",
    "todo.updated",
    "session.updated",
    "message.updated",
  ];
  const eventish = fc.record({
    type: fc.oneof(fc.constantFrom(...TYPES), fc.string()),
    properties: fc.oneof(
      fc.anything(),
      fc.record(
        { sessionID: fc.oneof(fc.string(), fc.anything()), info: fc.anything(), error: fc.anything(), status: fc.anything(), todos: fc.anything() },
        { requiredKeys: [] },
      ),
    ),
  });

  it("parseEvents never throws and returns typed governance events", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), eventish), (raw) => {
        for (const e of parseEvents(raw)) {
          expect(["created", "aborted", "errored", "idle", "compacted", "status", "todos", "titled", "usage", "deleted", "output"]).toContain(e.type);
          expect(typeof e.sessionId).toBe("string");
          if (e.type === "created") expect(e.parentId === null || typeof e.parentId === "string").toBe(true);
          if (e.type === "created") expect(e.title === null || typeof e.title === "string").toBe(true);
          if (e.type === "titled") expect(typeof e.title).toBe("string");
          if (e.type === "todos") expect(e.open).toBeLessThanOrEqual(e.total);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
