/**
 * The per-user key (governance/storage/directive-signing.ts) must never reach a model (issue 27 §2): a tool result that
 * carries it — `cat` through a symlink or a glob the call guard did not recognise, a copy in the project, `grep -r`
 * over the home folder — has it replaced before the model sees it. The forms a plain read or a common encoding
 * produce: the 64 hex digits (any case) and base64/base64url of the raw key and of the key file's text. Other
 * transformations (split, reversed, `xxd`) are not recognised: docs/security.md names this limit.
 */
export const KEY_REDACTED = "[governance key redacted]";

export type KeyForms = { pattern: RegExp; hex: string };

/** Built once per process from the key; the regex matches any form. */
export function keyForms(key: Buffer): KeyForms {
  const hex = key.toString("hex");
  const forms = new Set<string>();
  for (const bytes of [key, Buffer.from(hex), Buffer.from(`${hex}\n`), Buffer.from(hex.toUpperCase())]) {
    const b64 = bytes.toString("base64");
    forms.add(b64.replace(/=+$/, ""));
    forms.add(bytes.toString("base64url"));
  }
  // The trailing characters of a base64 text depend on what follows the key: a form without its last 4 characters is
  // still 60+ characters of the key's encoding, far beyond chance.
  const escaped = [...forms].map((f) => f.slice(0, -4).replace(/[+/\\^$.*?()[\]{}|-]/g, "\\$&"));
  return { pattern: new RegExp(`${hex}|${escaped.join("|")}`, "gi"), hex };
}

/** The output with every recognised form of the key replaced; `redacted` counts them. One regex pass, O(length). */
export function redactKey(output: string, forms: KeyForms): { output: string; redacted: number } {
  let redacted = 0;
  const next = output.replace(forms.pattern, () => {
    redacted++;
    return KEY_REDACTED;
  });
  return { output: redacted > 0 ? next : output, redacted };
}
