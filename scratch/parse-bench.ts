import { parseConfig } from "/work/wt/h-trust/governance/config/config-parse.ts";
import { parseDocument } from "yaml";
const keys = (n: number) => Array.from({ length: n }, (_, i) => `unknownkey${i}: 1`).join("\n") + "\n";
for (const n of [1000, 5000]) {
  const text = keys(n);
  let t = performance.now();
  parseDocument(text, { uniqueKeys: false });
  const a = performance.now() - t;
  t = performance.now();
  parseDocument(text, { uniqueKeys: true });
  const b = performance.now() - t;
  t = performance.now();
  const r = parseConfig(text);
  console.log(n, text.length, "yaml noUnique", a.toFixed(1), "unique", b.toFixed(1), "parseConfig", (performance.now() - t).toFixed(1), r.ok && r.problems.length);
}
const comments = "# " + "x".repeat(78) + "\n";
const c = comments.repeat(3000) + "phase: dev\n";
let t = performance.now(); parseConfig(c); console.log("240KB comments", (performance.now() - t).toFixed(1));
t = performance.now(); parseConfig("phase: dev\nenforcement: log-only\naudit:\n  maxBytes: 4096\n"); console.log("small", (performance.now() - t).toFixed(2));
t = performance.now(); parseConfig("phase: dev\nenforcement: log-only\naudit:\n  maxBytes: 8192\n"); console.log("small2", (performance.now() - t).toFixed(2));
