/**
 * The dashboard's one page. Session data is inserted with `textContent` only (agent names and tool summaries come
 * from models and users: never HTML). The token travels from the page URL to an API header, never to another origin.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>opencode-governance</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #222; }
  h1 { font-size: 1.2rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
  td.tool { font-family: ui-monospace, monospace; font-size: 12px; color: #555; }
  tr.done td { color: #999; }
  .controls { display: flex; gap: .3rem; white-space: nowrap; }
  input[type=text] { width: 14rem; }
  #status { margin: .5rem 0; min-height: 1.2em; }
  .err { color: #b00020; } .ok { color: #1b5e20; }
</style>
</head>
<body>
<h1>Governed OpenCode sessions</h1>
<label><input type="checkbox" id="all"> show finished sessions</label>
<div id="status"></div>
<table>
  <thead><tr><th>session</th><th>agent</th><th>depth</th><th>state / control</th><th>last tool call</th><th>controls</th></tr></thead>
  <tbody id="rows"><tr><td colspan="6">loading…</td></tr></tbody>
</table>
<script>
const token = new URLSearchParams(location.search).get("token") || "";
const headers = { "x-governance-token": token, "content-type": "application/json" };
const status = document.getElementById("status");
const drafts = new Map();
function say(text, ok) { status.textContent = text; status.className = ok ? "ok" : "err"; }
function cell(tr, text, cls) { const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; tr.appendChild(td); return td; }
async function post(path, body) {
  const res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  const data = await res.json();
  say(res.ok ? path.slice(5) + " requested for " + data.sessionIds.join(", ") + (data.warnings && data.warnings.length ? " (" + data.warnings.join("; ") + ")" : "") : data.error, res.ok);
  refresh();
}
function order(sessions) {
  const byParent = new Map();
  for (const s of sessions) { const k = s.parentId || ""; if (!byParent.has(k)) byParent.set(k, []); byParent.get(k).push(s); }
  const ids = new Set(sessions.map((s) => s.sessionId));
  const out = [];
  const walk = (s) => { out.push(s); for (const c of byParent.get(s.sessionId) || []) walk(c); };
  for (const s of sessions) if (!s.parentId || !ids.has(s.parentId)) walk(s);
  return out;
}
async function refresh() {
  const res = await fetch("/api/sessions", { headers });
  if (!res.ok) { say((await res.json()).error, false); return; }
  const { now, sessions } = await res.json();
  const all = document.getElementById("all").checked;
  const rows = document.getElementById("rows");
  rows.replaceChildren();
  const shown = order(sessions).filter((s) => all || s.running);
  if (shown.length === 0) { const tr = rows.insertRow(); cell(tr, all ? "No governed sessions." : "No running sessions.").colSpan = 6; return; }
  for (const s of shown) {
    const tr = document.createElement("tr");
    if (!s.running) tr.className = "done";
    cell(tr, "\\u00a0".repeat(s.depth * 3) + s.sessionId);
    cell(tr, s.agent || "?");
    cell(tr, String(s.depth));
    cell(tr, s.state + " / " + s.control);
    const ago = Math.round((now - s.lastActivityAt) / 1000);
    cell(tr, (s.lastToolCall ? s.lastToolCall.tool + " " + s.lastToolCall.summary : "-") + " (" + ago + "s ago)", "tool");
    const td = cell(tr, "");
    if (s.running) {
      const box = document.createElement("div"); box.className = "controls";
      const level = document.createElement("select");
      for (const l of [1, 2, 3]) { const o = document.createElement("option"); o.value = String(l); o.textContent = "L" + l; level.appendChild(o); }
      const stop = document.createElement("button"); stop.textContent = "Stop";
      stop.onclick = () => post("/api/stop", { target: s.sessionId, level: Number(level.value), reason: "stopped from the dashboard" });
      const text = document.createElement("input"); text.type = "text"; text.maxLength = 500; text.placeholder = "guidance for its next tool result";
      text.value = drafts.get(s.sessionId) || "";
      text.oninput = () => drafts.set(s.sessionId, text.value);
      const inject = document.createElement("button"); inject.textContent = "Inject";
      inject.onclick = () => { if (text.value.trim()) { drafts.delete(s.sessionId); post("/api/inject", { target: s.sessionId, text: text.value }); } };
      box.append(level, stop, text, inject); td.appendChild(box);
    }
    rows.appendChild(tr);
  }
}
document.getElementById("all").onchange = refresh;
refresh();
// Live refresh, except while the user is typing guidance (a re-render would take the focus away).
setInterval(() => { const a = document.activeElement; if (!(a && a.tagName === "INPUT" && a.type === "text")) refresh(); }, 2000);
</script>
</body>
</html>
`;
