/**
 * The dashboard's page, stylesheet and script, served as three routes so the CSP can forbid every inline script and
 * style. Session data is inserted with `textContent` only (agent names, tool summaries and audit details come from
 * models and users: never HTML). The token travels from the page URL to an API header or the event-stream URL of
 * the same origin, never elsewhere (`Referrer-Policy: no-referrer`).
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>opencode-governance</title>
<link rel="stylesheet" href="/dashboard.css">
<script src="/dashboard.js" defer></script>
</head>
<body>
<header>
  <h1>Governed OpenCode sessions</h1>
  <span id="live" class="live off">connecting…</span>
</header>
<label><input type="checkbox" id="all"> show finished sessions</label>
<div id="status" role="status"></div>
<table id="sessions">
  <thead><tr><th>session</th><th>agent</th><th>depth</th><th>state / control</th><th>last tool call</th><th>controls</th></tr></thead>
  <tbody id="rows"><tr><td colspan="6">loading…</td></tr></tbody>
</table>
<h2>Resumable sessions</h2>
<p class="hint">Interrupted, or idle within the resume window. Resume one in its project folder with the command shown; OpenCode then starts with the resume context below it.</p>
<ul id="resumable"><li>loading…</li></ul>
<h2>Audit log <span class="hint">(latest first)</span></h2>
<table id="audit">
  <thead><tr><th>time</th><th>event</th><th>session</th><th>detail</th></tr></thead>
  <tbody id="audit-rows"></tbody>
</table>
</body>
</html>
`;

export const DASHBOARD_STYLE = `body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #222; }
header { display: flex; align-items: baseline; gap: 1rem; }
h1 { font-size: 1.2rem; } h2 { font-size: 1.05rem; margin-top: 1.6rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
td.tool, td.mono, code, pre { font-family: ui-monospace, monospace; font-size: 12px; }
td.tool { color: #555; max-width: 28rem; overflow-wrap: anywhere; }
tr.done td { color: #999; }
.controls { display: flex; gap: .3rem; white-space: nowrap; }
input[type=text] { width: 14rem; }
#status { margin: .5rem 0; min-height: 1.2em; }
.err { color: #b00020; } .ok { color: #1b5e20; }
.live { font-size: 12px; padding: .1rem .5rem; border-radius: 1rem; background: #e8f5e9; color: #1b5e20; }
.live.off { background: #fdecea; color: #b00020; }
.hint { color: #666; font-size: 12px; font-weight: normal; }
.cycle { color: #b00020; font-size: 12px; }
#resumable li { margin: .4rem 0; }
#resumable pre { background: #f6f6f6; padding: .5rem; white-space: pre-wrap; max-width: 60rem; }
`;

/** Plain browser JavaScript; no framework, no build step, no inline handlers (the CSP forbids them). */
export const DASHBOARD_SCRIPT = `"use strict";
const token = new URLSearchParams(location.search).get("token") || "";
const headers = { "x-governance-token": token, "content-type": "application/json" };
const $ = (id) => document.getElementById(id);
const rowsById = new Map();
let snapshot = null;
let clockOffset = 0;

function say(text, ok) { $("status").textContent = text; $("status").className = ok ? "ok" : "err"; }
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
function span(ms) { const s = Math.max(0, Math.round(ms / 1000)); return s < 120 ? s + "s" : s < 7200 ? Math.round(s / 60) + " min" : Math.round(s / 3600) + " h"; }
function ago(at) { const s = Math.max(0, Math.round((Date.now() + clockOffset - at) / 1000)); return s < 120 ? s + "s ago" : s < 7200 ? Math.round(s / 60) + " min ago" : Math.round(s / 3600) + " h ago"; }

async function post(path, body) {
  try {
    const res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    const data = await res.json();
    say(res.ok ? path.slice(5) + " requested for " + data.sessionIds.join(", ") + (data.warnings && data.warnings.length ? " (" + data.warnings.join("; ") + ")" : "") : data.error, res.ok);
    return res.ok;
  } catch (e) { say(String(e), false); return false; }
}

/** One row per session, created once and updated in place, so a live update never takes the focus from a text box. */
function rowFor(s) {
  let row = rowsById.get(s.sessionId);
  if (row) return row;
  const tr = el("tr");
  tr.dataset.session = s.sessionId;
  const cells = ["id", "agent", "depth", "state", "tool", "controls"].map((k) => { const td = el("td", "", k === "tool" ? "tool" : ""); tr.appendChild(td); return td; });
  const box = el("div", undefined, "controls");
  const level = el("select");
  for (const l of [1, 2, 3]) { const o = el("option", "L" + l); o.value = String(l); level.appendChild(o); }
  const stop = el("button", "Stop");
  stop.addEventListener("click", () => post("/api/stop", { target: s.sessionId, level: Number(level.value), reason: "stopped from the dashboard" }));
  const text = el("input"); text.type = "text"; text.maxLength = snapshot.injectMaxLength; text.placeholder = "guidance for its next tool result";
  text.setAttribute("aria-label", "guidance for " + s.sessionId);
  const inject = el("button", "Inject");
  const send = async () => { if (text.value.trim() && (await post("/api/inject", { target: s.sessionId, text: text.value }))) text.value = ""; };
  inject.addEventListener("click", send);
  text.addEventListener("keydown", (e) => { if (e.key === "Enter") send(); });
  box.append(level, stop, text, inject);
  row = { tr, cells, box };
  rowsById.set(s.sessionId, row);
  return row;
}

function renderSessions() {
  const all = $("all").checked;
  const tbody = $("rows");
  const shown = snapshot.sessions.filter((s) => all || s.running);
  const live = new Set(shown.map((s) => s.sessionId));
  for (const id of [...rowsById.keys()]) if (!live.has(id)) { rowsById.get(id).tr.remove(); rowsById.delete(id); }
  for (const child of [...tbody.children]) if (!child.dataset.session) child.remove();
  if (shown.length === 0) { const tr = el("tr"); const td = el("td", all ? "No governed sessions." : "No running sessions."); td.colSpan = 6; tr.appendChild(td); tbody.appendChild(tr); return; }
  shown.forEach((s, i) => {
    const row = rowFor(s);
    const [id, agent, depth, state, tool, controls] = row.cells;
    id.textContent = "\\u00a0".repeat(Math.min(8, Math.max(0, s.indent)) * 3) + s.sessionId;
    if (s.cycle) id.appendChild(el("span", " (parent cycle)", "cycle"));
    agent.textContent = s.agent || "?";
    depth.textContent = String(s.depth);
    state.textContent = s.status + (s.running ? " for " + span(Date.now() + clockOffset - s.createdAt) : "") + " (" + s.state + " / " + s.control + ")";
    tool.textContent = (s.lastToolCall ? s.lastToolCall.tool + " " + s.lastToolCall.summary : "-") + " (" + ago(s.lastActivityAt) + ")";
    row.tr.className = s.running ? "" : "done";
    if (s.running && row.box.parentNode !== controls) controls.appendChild(row.box);
    if (!s.running && row.box.parentNode) row.box.remove();
    // Move a row only when it is out of place: moving a row would blur the guidance box being typed in.
    if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
  });
}

function renderResumable() {
  const ul = $("resumable");
  ul.replaceChildren();
  if (snapshot.resumable.length === 0) { ul.appendChild(el("li", "None: no session is interrupted or idle within the resume window.")); return; }
  for (const r of snapshot.resumable) {
    const li = el("li");
    li.dataset.session = r.sessionId;
    li.append(el("code", r.command, "command"), el("span", " " + (r.agent || "?") + ", " + (r.interrupted ? "interrupted" : r.state) + ", last active " + ago(r.lastActivityAt)));
    const details = el("details");
    details.append(el("summary", "resume context"), el("pre", r.context));
    li.appendChild(details);
    ul.appendChild(li);
  }
}

function renderAudit() {
  const tbody = $("audit-rows");
  tbody.replaceChildren();
  for (const a of snapshot.audit) {
    const tr = el("tr");
    tr.append(el("td", new Date(a.at).toISOString().slice(11, 19), "mono"), el("td", a.type), el("td", a.sessionId || "", "mono"), el("td", a.detail, "tool"));
    tbody.appendChild(tr);
  }
}

function render() {
  if (!snapshot) return;
  renderSessions();
  renderResumable();
  renderAudit();
}

function connect() {
  const events = new EventSource("/api/events?token=" + encodeURIComponent(token));
  events.addEventListener("snapshot", (e) => {
    snapshot = JSON.parse(e.data);
    clockOffset = snapshot.now - Date.now();
    $("live").textContent = "live"; $("live").className = "live";
    render();
  });
  events.addEventListener("error", () => { $("live").textContent = "disconnected, reconnecting…"; $("live").className = "live off"; });
}

document.addEventListener("DOMContentLoaded", () => {
  $("all").addEventListener("change", render);
  connect();
  setInterval(() => { if (snapshot) for (const s of snapshot.sessions) { const row = rowsById.get(s.sessionId); if (row) row.cells[4].textContent = (s.lastToolCall ? s.lastToolCall.tool + " " + s.lastToolCall.summary : "-") + " (" + ago(s.lastActivityAt) + ")"; } }, 1000);
});
`;
