/**
 * `OTEL_DUMP=/tmp/otel.json npx vitest run test/e2e/telemetry.test.ts && npx tsx scripts/render-trace.ts /tmp/otel.json`:
 * draws the governance spans the end-to-end test's OTLP receiver got from a real `opencode serve` as a waterfall
 * (one block per trace = per user prompt, spans nested like the session tree, governance events as marks) into
 * docs/images/telemetry-trace.svg, the picture in docs/observability.md. Ids are shortened; nothing is invented.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

type Span = {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const input = process.argv[2];
if (!input) throw new Error("usage: tsx scripts/render-trace.ts <dump.json written by the e2e test with OTEL_DUMP>");
const dump = JSON.parse(readFileSync(input, "utf8")) as { spans: Span[] };
const spans = dump.spans.filter((s) => s.service === "opencode-governance");

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const short = (id: unknown) => (typeof id === "string" ? `${id.slice(0, 8)}…${id.slice(-4)}` : "");

const rows: string[] = [];
let y = 40;
const W = 1100;
const LABEL = 470;
const startOf = (s: Span) => Number(BigInt(s.startTimeUnixNano ?? "0") / 1_000_000n);
const traces = spans
  .filter((s) => !s.parentSpanId)
  .sort((a, b) => startOf(a) - startOf(b))
  .map((s) => s.traceId);
for (const [i, traceId] of traces.entries()) {
  const inTrace = spans.filter((s) => s.traceId === traceId);
  const t = (s: Span, k: "startTimeUnixNano" | "endTimeUnixNano") => Number(BigInt(s[k] ?? "0") / 1_000_000n);
  const t0 = Math.min(...inTrace.map((s) => t(s, "startTimeUnixNano")));
  const t1 = Math.max(...inTrace.map((s) => t(s, "endTimeUnixNano")));
  const x = (ms: number) => LABEL + ((ms - t0) / Math.max(1, t1 - t0)) * (W - LABEL - 20);
  rows.push(`<text x="10" y="${y}" class="h">Trace ${i + 1} (${esc(short(traceId))}) — one user prompt, ${t1 - t0} ms</text>`);
  y += 8;
  const walk = (parent: string, depth: number) => {
    for (const s of inTrace.filter((c) => c.parentSpanId === parent).sort((a, b) => t(a, "startTimeUnixNano") - t(b, "startTimeUnixNano"))) {
      y += 22;
      const tool = s.name.startsWith("execute_tool");
      const outcome = String(s.attributes["governance.turn.outcome"] ?? "");
      const label = tool
        ? s.name
        : `${s.name}  d${s.attributes["governance.depth"] ?? "?"} ${s.attributes["governance.role"] ?? ""}  ${short(s.attributes["gen_ai.conversation.id"])}`;
      rows.push(`<text x="${10 + depth * 16}" y="${y}" class="${tool ? "t" : "s"}">${esc(label)}</text>`);
      const x0 = x(t(s, "startTimeUnixNano"));
      const x1 = Math.max(x0 + 2, x(t(s, "endTimeUnixNano")));
      const cls = tool ? "bt" : outcome === "interrupted" ? "bi" : "bs";
      rows.push(`<rect x="${x0.toFixed(1)}" y="${y - 11}" width="${(x1 - x0).toFixed(1)}" height="13" class="${cls}"/>`);
      const marks = s.events.filter((e) => !/child\.(linked|closed)/.test(e.name));
      if (marks.length > 0)
        rows.push(`<text x="${(x1 + 4).toFixed(1)}" y="${y}" class="e">${esc(marks.map((e) => e.name.replace(/^governance\./, "")).join(", "))}</text>`);
      if (!tool && outcome && outcome !== "completed") rows.push(`<text x="${(x0 + 3).toFixed(1)}" y="${y - 1}" class="o">${esc(outcome)}</text>`);
      walk(s.spanId, depth + 1);
    }
  };
  const rootSpan = inTrace.find((s) => !s.parentSpanId)!;
  walk(rootSpan.parentSpanId, 0);
  y += 30;
}
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W + 260}" height="${y}" font-family="monospace" font-size="12" role="img">
<title>Governance spans exported by the end-to-end test</title>
<style>.h{font-weight:bold;font-size:13px}.s{fill:#222}.t{fill:#666}.e{fill:#b03000}.o{fill:#fff;font-size:10px}.bs{fill:#4a78c2}.bi{fill:#c2644a}.bt{fill:#9bb5dd}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="10" y="20" class="h">opencode-governance → OTLP: invoke_agent spans per turn, nested like the session tree (from test/e2e/telemetry.test.ts)</text>
${rows.join("\n")}
</svg>
`;
const out = path.join(root, "docs", "images", "telemetry-trace.svg");
writeFileSync(out, svg);
console.log(`${path.relative(root, out)}: ${traces.length} trace(s), ${spans.length} span(s)`);
