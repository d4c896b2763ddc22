import { unitsByKey } from "../governance/config/budget-kinds.ts";

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
  <span id="host" class="hint"></span>
</header>
<label><input type="checkbox" id="all"> show finished sessions</label>
<div id="status" role="status"></div>
<div id="notice" class="hint"></div>
<ul id="spend" class="hint" aria-label="spend today and this week"></ul>
<table id="sessions">
  <thead><tr><th>session tree</th><th>session</th><th>agent</th><th>state</th><th>budget</th><th>last tool call</th><th>controls</th></tr></thead>
  <tbody id="rows"><tr><td colspan="7">loading…</td></tr></tbody>
</table>
<h2>Timeline <span class="hint">(each session from its start to its end or now — hover a mark for details)</span></h2>
<ul id="legend" class="legend" aria-label="timeline legend">
  <li data-kind="running"><span class="swatch span-sample"></span>running</li>
  <li data-kind="finished"><span class="swatch span-sample done"></span>finished</li>
  <li data-kind="stop"><span class="swatch mark stop"></span>stop requested, delivered or done</li>
  <li data-kind="budget"><span class="swatch mark budget"></span>budget warned, exceeded or raised</li>
  <li data-kind="loop"><span class="swatch mark loop"></span>loop noticed</li>
  <li data-kind="guidance"><span class="swatch mark guidance"></span>guidance delivered or dropped</li>
  <li data-kind="escape"><span class="swatch mark escape"></span>Escape (or its parent's abort)</li>
  <li data-kind="end"><span class="swatch mark end"></span>ended</li>
  <li data-kind="refused"><span class="swatch mark refused"></span>refused (delegation or tool call)</li>
  <li data-kind="tool"><span class="swatch mark tool"></span>last tool call</li>
</ul>
<div id="timeline"></div>
<h2>Resumable sessions</h2>
<p class="hint">Interrupted, or idle within the resume window. Resume one in its project folder with the command shown; OpenCode then starts with the resume context below it.</p>
<ul id="resumable"><li>loading…</li></ul>
<details id="audit-box">
<summary>Audit log <span class="hint">(the latest governance events, newest first)</span></summary>
<table id="audit">
  <thead><tr><th>time</th><th>event</th><th>session</th><th>detail</th></tr></thead>
  <tbody id="audit-rows"></tbody>
</table>
</details>
</body>
</html>
`;

export const DASHBOARD_STYLE = `body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #222; }
header { display: flex; align-items: baseline; gap: 1rem; }
h1 { font-size: 1.2rem; } h2 { font-size: 1.05rem; margin-top: 1.6rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
td.tool, td.mono, code, pre { font-family: ui-monospace, monospace; font-size: 12px; }
td.tool { color: #555; min-width: 8rem; max-width: 28rem; overflow-wrap: anywhere; }
tr.done td { color: #999; }
.branch { font-family: ui-monospace, monospace; color: #888; white-space: pre; }
.word { font-weight: 600; } .word.running { color: #1b5e20; } .word.stopping { color: #b00020; } .word.stopped, .word.interrupted { color: #8a3b00; }
tr.done .word { color: #777; }
.note { font-size: 12px; margin-top: .15rem; } .note.stop, .note.interrupted { color: #8a3b00; } .note.blocked { color: #b00020; } .note.dropped { color: #6a1b9a; }
details#audit-box { margin-top: 1.6rem; } details#audit-box summary { font-weight: 600; cursor: pointer; }
.controls { display: flex; gap: .3rem; white-space: nowrap; }
input[type=text] { width: 10rem; }
#status { margin: .5rem 0; min-height: 1.2em; }
.err { color: #b00020; } .ok { color: #1b5e20; }
.live { font-size: 12px; padding: .1rem .5rem; border-radius: 1rem; background: #e8f5e9; color: #1b5e20; }
.live.off { background: #fdecea; color: #b00020; }
.hint { color: #666; font-size: 12px; font-weight: normal; }
.cycle { color: #b00020; font-size: 12px; }
.checks { color: #8a5a00; font-size: 12px; }
.bar { position: relative; width: 8rem; height: .55rem; background: #eee; border-radius: .3rem; overflow: hidden; margin: .15rem 0; }
.bar .fill { position: absolute; left: 0; top: 0; bottom: 0; background: #43a047; }
.bar.warn .fill { background: #f9a825; } .bar.over .fill { background: #c62828; }
.budget { font-size: 11px; color: #555; white-space: nowrap; }
#timeline .line { display: grid; grid-template-columns: 16rem 1fr; align-items: center; gap: .5rem; margin: .2rem 0; }
#timeline .who { font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#timeline .track { position: relative; height: 1.1rem; background: #fafafa; border-left: 1px solid #ddd; }
#timeline .span { position: absolute; top: .3rem; height: .5rem; background: #90caf9; border-radius: .25rem; min-width: 2px; }
#timeline .span.done { background: #cfd8dc; }
#timeline .mark { position: absolute; top: .1rem; width: .5rem; height: .9rem; margin-left: -.25rem; border-radius: .15rem; }
.mark.stop { background: #c62828; } .mark.budget { background: #f9a825; } .mark.loop { background: #6a1b9a; }
.mark.guidance { background: #1565c0; } .mark.escape { background: #000; } .mark.end { background: #607d8b; } .mark.refused { background: #ef6c00; }
.mark.tool { background: #2e7d32; width: 2px; margin-left: -1px; }
#timeline .axis { font-size: 11px; color: #666; display: flex; justify-content: space-between; margin-left: 16.5rem; }
.legend { list-style: none; padding: 0; margin: .3rem 0 .6rem; display: flex; flex-wrap: wrap; gap: .3rem 1rem; font-size: 12px; color: #444; }
.legend li { display: flex; align-items: center; gap: .3rem; }
.legend .swatch { display: inline-block; width: .5rem; height: .9rem; border-radius: .15rem; }
.legend .span-sample { width: 1.2rem; height: .5rem; border-radius: .25rem; background: #90caf9; } .legend .span-sample.done { background: #cfd8dc; }
.legend .mark.tool { width: 2px; }
td.title { min-width: 12rem; max-width: 22rem; overflow-wrap: break-word; } td.title .untitled { color: #999; }
.tree { display: flex; } .tree .branch { flex: none; }
td.state { min-width: 13rem; max-width: 30rem; }
.empty { color: #555; }
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
/** Each budget key's unit, from the kinds table (governance/config/budget-kinds.ts). */
const BUDGET_UNITS = ${JSON.stringify(unitsByKey())};

function say(text, ok) { $("status").textContent = text; $("status").className = ok ? "ok" : "err"; }
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
function span(ms) { const s = Math.max(0, Math.round(ms / 1000)); return s < 120 ? s + "s" : s < 7200 ? Math.round(s / 60) + " min" : Math.round(s / 3600) + " h"; }
/** Running, stopping, idle and interrupted say for how long; a finished state says how long ago it began. */
const ONGOING = new Set(["running", "stopping", "idle", "interrupted"]);
function since(s) { const d = Date.now() + clockOffset - s.since; return ONGOING.has(s.status) ? "for " + span(d) : span(d) + " ago"; }
function ago(at) { const s = Math.max(0, Math.round((Date.now() + clockOffset - at) / 1000)); return s < 120 ? s + "s ago" : s < 7200 ? Math.round(s / 60) + " min ago" : Math.round(s / 3600) + " h ago"; }

async function post(path, body) {
  try {
    const res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    const data = await res.json();
    const warned = data.warnings && data.warnings.length ? " (" + data.warnings.join("; ") + ")" : "";
    const done = res.ok && data.taken !== false;
    say(res.ok ? (data.said ? data.said.join("; ") : path.slice(5) + " requested for " + data.sessionIds.join(", ")) + warned : data.error, done);
    return done;
  } catch (e) { say(String(e), false); return false; }
}

/** One row per session, created once and updated in place, so a live update never takes the focus from a text box. */
function rowFor(s) {
  let row = rowsById.get(s.sessionId);
  if (row) return row;
  const tr = el("tr");
  tr.dataset.session = s.sessionId;
  const cells = ["title", "id", "agent", "state", "budget", "tool", "controls"].map((k) => { const td = el("td", "", k === "tool" ? "tool" : k === "id" ? "mono" : k === "title" ? "title" : k === "state" ? "state" : ""); tr.appendChild(td); return td; });
  const box = el("div", undefined, "controls");
  const level = el("select");
  for (const l of [1, 2, 3]) { const o = el("option", "L" + l); o.value = String(l); level.appendChild(o); }
  const stop = el("button", "Stop");
  stop.addEventListener("click", () => post("/api/stop", { target: s.sessionId, level: Number(level.value), reason: "stopped from the dashboard" }));
  const text = el("input"); text.type = "text"; text.maxLength = snapshot.injectMaxLength; text.placeholder = "guidance for its next tool result";
  text.setAttribute("aria-label", "guidance for " + (s.title || s.sessionId));
  const inject = el("button", "Inject");
  const send = async () => { if (text.value.trim() && (await post("/api/inject", { target: s.sessionId, text: text.value }))) text.value = ""; };
  inject.addEventListener("click", send);
  text.addEventListener("keydown", (e) => { if (e.key === "Enter") send(); });
  box.append(level, stop, text, inject);
  const word = el("span", "", "word"); const dur = el("span", "", "since"); const notes = el("div");
  cells[3].append(word, document.createTextNode(" "), dur, notes);
  row = { tr, cells, box, word, dur, notes };
  rowsById.set(s.sessionId, row);
  return row;
}

/** The root of a session's tree (a cycle or a missing parent ends the walk). */
function rootOf(s) { const byId = new Map(snapshot.sessions.map((x) => [x.sessionId, x])); let r = s; for (let i = 0; i < 64 && r.parentId && byId.has(r.parentId); i++) r = byId.get(r.parentId); return r.sessionId; }
/** Whole trees: a tree with a running session is shown with its finished members (the connectors stay true); "show finished" shows every tree. */
function shownSessions() {
  if ($("all").checked) return snapshot.sessions;
  const live = new Set(snapshot.sessions.filter((s) => s.running).map(rootOf));
  return snapshot.sessions.filter((s) => live.has(rootOf(s)));
}

function renderSessions() {
  const all = $("all").checked;
  const tbody = $("rows");
  const shown = shownSessions();
  const live = new Set(shown.map((s) => s.sessionId));
  for (const id of [...rowsById.keys()]) if (!live.has(id)) { rowsById.get(id).tr.remove(); rowsById.delete(id); }
  for (const child of [...tbody.children]) if (!child.dataset.session) child.remove();
  if (shown.length === 0) {
    const finished = snapshot.sessions.length;
    const text = finished === 0 ? "No governed session has run in this project yet — start OpenCode here." : all ? "No governed sessions." : "No running sessions — tick “show finished sessions” to see the " + finished + " that ran.";
    const tr = el("tr", undefined, "empty"); const td = el("td", text); td.colSpan = 7; tr.appendChild(td); tbody.appendChild(tr); return;
  }
  shown.forEach((s, i) => {
    const row = rowFor(s);
    const [title, id, agent, state, budget, tool, controls] = row.cells;
    // The connectors stay on the first line; a long title wraps at its words beside them.
    const tree = el("div", undefined, "tree");
    tree.append(el("span", s.branch, "branch"), s.title ? el("span", s.title) : el("span", "(untitled)", "untitled"));
    title.replaceChildren(tree);
    title.title = (s.title ? s.title + "\\n" : "") + "depth " + s.depth;
    if (s.cycle) tree.appendChild(el("span", " (parent cycle)", "cycle"));
    id.textContent = s.sessionId;
    agent.textContent = s.agent || "?";
    // One word for where it stands (the CLI's sessionStatus); the record's state and control in the tooltip.
    row.word.textContent = s.status; row.word.className = "word " + s.status;
    row.dur.textContent = since(s);
    state.title = "state " + s.state + " / control " + s.control;
    row.notes.replaceChildren();
    for (const n of s.notes) { const d = el("div", n.text, "note " + n.kind); d.dataset.kind = n.kind; row.notes.appendChild(d); }
    if (!s.verified) row.notes.appendChild(el("div", "unverified record (not written by your governance)", "checks"));
    if (s.warnings.length > 0) row.notes.appendChild(el("div", "\\u26a0 " + s.warnings.join("; "), "checks"));
    tool.textContent = (s.lastToolCall ? s.lastToolCall.tool + " " + s.lastToolCall.summary : "-") + " (" + ago(s.lastActivityAt) + ")";
    renderBudget(budget, s.budget);
    row.tr.className = s.running ? "" : "done";
    if (s.running && row.box.parentNode !== controls) controls.appendChild(row.box);
    if (!s.running && row.box.parentNode) row.box.remove();
    // Move a row only when it is out of place: moving a row would blur the guidance box being typed in.
    if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
  });
}

/** An amount as people read it by its kind's unit: $ for dollars, s/m/h for a duration, k/M for a count. */
function amount(key, v, setWith) {
  const unit = BUDGET_UNITS[key];
  if (unit === "usd") { const d = String(setWith === undefined || setWith === null ? v : setWith).split(".")[1]; return "$" + v.toFixed(Math.min(6, Math.max(2, d ? d.length : 0))); }
  if (unit === "ms") { const s = Math.round(v / 1000); return s < 120 ? s + "s" : s < 7200 ? Math.round(s / 60) + "m" : (Math.round(s / 360) / 10) + "h"; }
  return v < 10000 ? String(Math.round(v)) : v < 1e6 ? (Math.round(v / 100) / 10) + "k" : (Math.round(v / 1e5) / 10) + "M";
}

/** The fullest limited budget as a bar (amber from the warning share, red when out), every limited one in its tooltip. */
function budgetBar(label, lines, exceeded) {
  const limited = lines.filter((l) => l.limit !== null);
  if (limited.length === 0) return null;
  const top = limited.reduce((a, b) => ((b.share || 0) > (a.share || 0) ? b : a));
  const share = top.share || 0;
  const wrap = el("div");
  const bar = el("div", undefined, "bar" + (share >= 1 || exceeded ? " over" : share >= snapshot.budgetWarnAt ? " warn" : ""));
  const fill = el("div", undefined, "fill");
  fill.style.width = Math.min(100, Math.round(share * 100)) + "%";
  bar.appendChild(fill);
  bar.setAttribute("role", "meter"); bar.setAttribute("aria-valuenow", String(Math.round(share * 100))); bar.setAttribute("aria-label", label + " budget " + top.key);
  wrap.title = limited.map((l) => label + " " + l.key + ": " + amount(l.key, l.used, l.limit) + " of " + amount(l.key, l.limit, l.limit) + (l.from ? " (limit set by " + l.from + ")" : "")).join("\\n");
  const layer = top.from === "organisation" || top.from === "user" ? " (" + top.from + ")" : "";
  wrap.append(bar, el("span", label + " " + top.key + " " + amount(top.key, top.used, top.limit) + "/" + amount(top.key, top.limit, top.limit) + layer, "budget"));
  return wrap;
}

function renderBudget(td, b) {
  td.replaceChildren();
  const own = budgetBar("own", b.session, b.exceeded && b.exceeded.scope === "session");
  const tree = b.tree ? budgetBar("tree", b.tree, b.exceeded && b.exceeded.scope === "tree") : null;
  if (own) td.appendChild(own);
  if (tree) td.appendChild(tree);
  if (!own && !tree) td.textContent = "-";
  if (b.exceeded) td.appendChild(el("div", "out of " + b.exceeded.scope + " " + b.exceeded.key, "err budget"));
}

/** Each shown session as a bar from its start to its end (or now), with its governance events and its last tool call. */
function renderTimeline() {
  const box = $("timeline");
  box.replaceChildren();
  const rows = shownSessions();
  if (rows.length === 0) { box.appendChild(el("p", snapshot.sessions.length === 0 ? "Nothing yet: governed sessions appear here once OpenCode runs in this project." : "No running session trees (tick “show finished sessions”).", "hint")); return; }
  const now = snapshot.now;
  const t0 = Math.min(...rows.map((s) => s.createdAt));
  const width = Math.max(1, now - t0);
  const pos = (at) => Math.max(0, Math.min(100, ((at - t0) / width) * 100)) + "%";
  const marksBy = new Map();
  for (const m of snapshot.marks) { if (!marksBy.has(m.sessionId)) marksBy.set(m.sessionId, []); marksBy.get(m.sessionId).push(m); }
  for (const s of rows) {
    const line = el("div", undefined, "line");
    line.dataset.session = s.sessionId;
    const who = el("div", undefined, "who");
    who.append(el("span", s.branch, "branch"), document.createTextNode((s.title ? s.title + " · " : "") + (s.agent || "?") + " · " + s.toolCalls + " tool call" + (s.toolCalls === 1 ? "" : "s")));
    who.title = (s.title ? s.title + "\\n" : "") + s.sessionId;
    const track = el("div", undefined, "track");
    const end = s.endedAt !== null ? s.endedAt : s.running ? now : s.lastActivityAt;
    const bar = el("div", undefined, "span" + (s.running ? "" : " done"));
    bar.style.left = pos(s.createdAt);
    bar.style.width = "calc(" + pos(end) + " - " + pos(s.createdAt) + ")";
    bar.title = s.sessionId + ": started " + new Date(s.createdAt).toISOString().slice(11, 19) + (s.running ? ", running" : ", " + s.status + " " + new Date(end).toISOString().slice(11, 19));
    track.appendChild(bar);
    if (s.lastToolCall) {
      const t = el("div", undefined, "mark tool");
      t.style.left = pos(s.lastToolCall.at);
      t.title = "last tool call " + new Date(s.lastToolCall.at).toISOString().slice(11, 19) + ": " + s.lastToolCall.tool + " " + s.lastToolCall.summary;
      track.appendChild(t);
    }
    for (const m of marksBy.get(s.sessionId) || []) {
      const mk = el("div", undefined, "mark " + m.kind);
      mk.dataset.type = m.type;
      mk.style.left = pos(m.at);
      mk.title = new Date(m.at).toISOString().slice(11, 19) + " " + m.type + (m.detail ? ": " + m.detail : "");
      track.appendChild(mk);
    }
    line.append(who, track);
    box.appendChild(line);
  }
  const axis = el("div", undefined, "axis");
  axis.append(el("span", new Date(t0).toISOString().slice(11, 19)), el("span", "now " + new Date(now).toISOString().slice(11, 19)));
  box.appendChild(axis);
}

function renderResumable() {
  const ul = $("resumable");
  ul.replaceChildren();
  if (snapshot.resumable.length === 0) { ul.appendChild(el("li", "None: no session is interrupted or idle within the resume window.")); return; }
  for (const r of snapshot.resumable) {
    const li = el("li");
    li.dataset.session = r.sessionId;
    li.append(el("code", r.command, "command"), el("span", (r.title ? " “" + r.title + "”" : "") + " " + (r.agent || "?") + ", " + r.word + ", last active " + ago(r.lastActivityAt)));
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
    const who = el("td", a.title || "", "title");
    if (a.sessionId) who.appendChild(el("div", a.sessionId, "mono"));
    tr.append(el("td", new Date(a.at).toISOString().slice(11, 19), "mono"), el("td", a.type), who, el("td", a.detail, "tool"));
    tbody.appendChild(tr);
  }
}

function renderNotice() {
  const parts = [];
  if (snapshot.unverified > 0) parts.push(snapshot.unverified + " record(s) in the state folder were not written by your governance (planted, copied in, or from an older build): never shown as running, never stopped by agent name.");
  if (snapshot.sessionsLeft > 0) parts.push(snapshot.sessionsLeft + " more session(s) not shown (at most 500 rows; opencode-governance sessions --json lists every one).");
  $("notice").textContent = parts.join(" ");
}

function renderSpend() {
  $("host").textContent = snapshot.host ? "on " + snapshot.host : "";
  const ul = $("spend");
  ul.replaceChildren();
  for (const s of snapshot.spend || []) ul.appendChild(el("li", s.text, s.spent ? "over" : ""));
}

function render() {
  if (!snapshot) return;
  renderNotice();
  renderSpend();
  renderSessions();
  renderTimeline();
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
  setInterval(() => { if (snapshot) for (const s of snapshot.sessions) { const row = rowsById.get(s.sessionId); if (row) { row.dur.textContent = since(s); row.cells[5].textContent = (s.lastToolCall ? s.lastToolCall.tool + " " + s.lastToolCall.summary : "-") + " (" + ago(s.lastActivityAt) + ")"; } } }, 1000);
});
`;
