import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { KEY_REDACTED, keyForms, redactKey } from "../../../governance/texts/key-redaction.ts";

const key = randomBytes(32);
const hex = key.toString("hex");
const forms = keyForms(key);

describe("the key never reaches a model (issue 27 §2)", () => {
  it.each([
    ["cat", `${hex}\n`],
    ["upper case", hex.toUpperCase()],
    ["inside a line", `key=${hex};`],
    ["base64 of the key", key.toString("base64")],
    ["base64 of the file (base64 queue-key)", Buffer.from(`${hex}\n`).toString("base64")],
    ["base64url", key.toString("base64url")],
    ["twice", `${hex} and ${hex}`],
  ])("%s is redacted", (_name, text) => {
    const out = redactKey(`before ${text} after`, forms);
    expect(out.redacted).toBeGreaterThan(0);
    expect(out.output.toLowerCase()).not.toContain(hex);
    expect(out.output).toContain(KEY_REDACTED);
  });

  it("other output, other 64-hex values (a commit, a hash) are unchanged", () => {
    const other = randomBytes(32).toString("hex");
    const text = `sha256 ${other}\ncommit 1a2b3c`;
    expect(redactKey(text, forms)).toEqual({ output: text, redacted: 0 });
  });

  it("is one pass: 1 MB of output in a few ms", () => {
    const big = "x".repeat(1_000_000);
    const t = performance.now();
    redactKey(big, forms);
    expect(performance.now() - t).toBeLessThan(200);
  });
});
