import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeRecord } from "../governance/fixtures/records.ts";
import { decodeRecord } from "../../governance/session/session-store.ts";

/**
 * Issue 8 acceptance: the record loader never throws and always returns a typed result. Whatever bytes a record
 * file holds (a hostile repository, a torn write, a newer build), `decodeRecord` answers ok / bad / newer / missing,
 * and `ok` only with a record of the file's own session.
 */
const ID = "ses_property00000000000000001";
const KINDS = new Set(["ok", "bad", "newer", "missing"]);

function check(text: string): void {
  let result: ReturnType<typeof decodeRecord> | undefined;
  expect(() => (result = decodeRecord(ID, text))).not.toThrow();
  expect(KINDS.has(result!.kind)).toBe(true);
  if (result!.kind === "ok") expect(result!.record.sessionId).toBe(ID);
  if (result!.kind === "bad" || result!.kind === "newer") expect(typeof result!.reason).toBe("string");
}

describe("record loader (property)", () => {
  it("arbitrary bytes decoded as UTF-8", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => check(Buffer.from(bytes).toString("utf8"))),
      { numRuns: 500 },
    );
  });

  it("arbitrary JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => check(JSON.stringify(value))),
      { numRuns: 500 },
    );
  });

  it("valid records with one field replaced by anything (including __proto__ and a huge schemaVersion)", () => {
    const base = makeRecord({ sessionId: ID }) as unknown as Record<string, unknown>;
    const keys = [...Object.keys(base), "__proto__", "constructor", "schemaVersion"];
    fc.assert(
      fc.property(
        fc.constantFrom(...keys),
        fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.integer(), fc.double(), fc.constant(Number.MAX_SAFE_INTEGER + 2)),
        (key, value) => {
          const text = JSON.stringify(base).replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(value) ?? "null"},`);
          check(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("valid records truncated anywhere", () => {
    const text = JSON.stringify(makeRecord({ sessionId: ID }), null, 2);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: text.length }), (n) => check(text.slice(0, n))),
      { numRuns: 300 },
    );
    expect(decodeRecord(ID, text).kind).toBe("ok");
  });
});
