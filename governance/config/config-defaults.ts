import { BUDGET_KEYS, BUDGET_KINDS } from "./budget-kinds.ts";
/**
 * The shipped hierarchy (DESIGN.md): which agent is a hub or a leaf, and whom it may spawn. Mirrored in the YAML.
 * OpenCode's own agents are named too (decision 0024): `build` and `plan` (its primaries) and `general` may spawn any
 * agent, as without governance; `explore` is read-only in OpenCode and a leaf here. An agent named nowhere gets
 * `defaultRole`, a leaf: a caller governance does not know cannot spawn (seed 002's hub gate).
 */
export const DEFAULT_AGENTS = {
  build: { role: "delegating", mayDelegateTo: ["*"] },
  plan: { role: "delegating", mayDelegateTo: ["*"] },
  general: { role: "delegating", mayDelegateTo: ["*"] },
  explore: { role: "leaf", mayDelegateTo: [] },
  "governance-coordinator": {
    role: "primary",
    mayDelegateTo: ["governance-planner", "governance-executor", "governance-verifier", "governance-high", "general", "explore"],
  },
  "governance-high": {
    role: "delegating",
    mayDelegateTo: ["governance-planner", "governance-executor", "governance-verifier", "governance-builder", "governance-validator"],
  },
  "governance-planner": {
    role: "delegating",
    mayDelegateTo: ["governance-verifier", "governance-validator", "general", "explore"],
  },
  "governance-executor": {
    role: "delegating",
    mayDelegateTo: ["governance-verifier", "governance-builder", "governance-validator", "general", "explore"],
  },
  "governance-verifier": { role: "delegating", mayDelegateTo: ["governance-validator", "general", "explore"] },
  "governance-builder": { role: "leaf", mayDelegateTo: [] },
  "governance-validator": { role: "leaf", mayDelegateTo: [] },
} satisfies Record<string, { role: "primary" | "delegating" | "leaf"; mayDelegateTo: string[] }>;

/** The YAML's comment over `budgets:`: every key of the kinds table, wrapped at 120 columns. */
function budgetKeysComment(): string {
  const keys = BUDGET_KEYS.map((k) => (BUDGET_KINDS[k].unit === "usd" ? `${k} (US dollars)` : k)).join(", ");
  const lines: string[] = [];
  let line = "#";
  for (const word of `Budgets (docs/budgets.md). Keys: ${keys}. A missing key is no limit.`.split(" ")) {
    if (`${line} ${word}`.length > 120) {
      lines.push(line);
      line = "#";
    }
    line = `${line} ${word}`;
  }
  return [...lines, line].join("\n");
}

/**
 * The config file written on first run (S1-R02) to `.opencode/governance.yaml`. Users hand-edit it, so every field is
 * present with a one-line comment. Invariant (tested): parsing this text yields exactly the schema defaults of
 * `GovernanceConfig`, so the file documents what the plugin does when the file is absent or empty.
 */
export const DEFAULT_CONFIG_YAML = `# yaml-language-server: $schema=./governance.schema.json
# opencode-governance configuration. Generated with the defaults; edit freely.
# Durations: "90s", "10m", "1h", "48h", "2d" or a number of milliseconds.
# If this file is broken, the plugin reports where and keeps running on the last good config.

# Format version of this file; leave as is.
schemaVersion: 1

# Languages every agent must use (kept through compaction).
language:
  # Language for talking to you.
  communication: English
  # Language for documents, comments and commit messages the agents write.
  documents: English

# Project phase shown to every agent (for example planning, implementation, release).
phase: implementation

# enforce: block spawns the policy forbids. log-only: allow them and record an audit event.
enforcement: enforce

# Agent shell commands run in a sandbox (bubblewrap). Where none can run: best-effort (run them with the in-process
# checks only, said once) or required (refuse them).
confinement: best-effort

delegation:
  # Deepest subagent allowed: a root session is depth 0, its subagent depth 1, and so on.
  maxDepth: 3

# Policy for agents not listed under "agents": a leaf, so an agent governance does not know cannot spawn.
# List an agent of your own under "agents" to let it delegate.
defaultRole:
  # primary (coordinates, never edits), delegating (may spawn subagents) or leaf (cannot delegate).
  role: leaf
  # Agents it may spawn: names or globs (* = anything, !name = deny); the last matching entry wins.
  mayDelegateTo: []

# Agents by name, each with a role and the agents it may spawn (same rules as defaultRole).
agents:
  # OpenCode's own agents: build and plan (its primaries) and general delegate as they do without governance.
  build:
    role: delegating
    mayDelegateTo: ["*"]
  plan:
    role: delegating
    mayDelegateTo: ["*"]
  general:
    role: delegating
    mayDelegateTo: ["*"]
  # OpenCode's read-only explorer: cannot delegate.
  explore:
    role: leaf
    mayDelegateTo: []
  # Primary coordinator: plans with you and delegates; never edits files itself.
  governance-coordinator:
    role: primary
    mayDelegateTo: [governance-planner, governance-executor, governance-verifier, governance-high, general, explore]
  # High-level governance: splits large work across the mid-level agents.
  governance-high:
    role: delegating
    mayDelegateTo: [governance-planner, governance-executor, governance-verifier, governance-builder, governance-validator]
  # Planner: turns a goal into steps; may ask for checks and research.
  governance-planner:
    role: delegating
    mayDelegateTo: [governance-verifier, governance-validator, general, explore]
  # Executor: carries out planned steps through builders and validators.
  governance-executor:
    role: delegating
    mayDelegateTo: [governance-verifier, governance-builder, governance-validator, general, explore]
  # Verifier: checks finished work.
  governance-verifier:
    role: delegating
    mayDelegateTo: [governance-validator, general, explore]
  # Builder: edits files and runs commands; cannot delegate.
  governance-builder:
    role: leaf
    mayDelegateTo: []
  # Validator: read-only checks; cannot delegate.
  governance-validator:
    role: leaf
    mayDelegateTo: []

resume:
  # A session coming back after at least this long idle gets a resume context.
  minIdle: 1h
  # A session idle longer than this starts fresh; its record is archived.
  maxIdle: 48h

orphans:
  # A running subagent with no activity for this long is reported as orphaned.
  staleAfter: 10m

stop:
  # Time a session asked to stop may go without a sign of life before it is aborted: counted from the request
  # and, once a stop directive has reached it, from its last tool call, streamed output or model step.
  deadline: 5s
  # However much it shows signs of life, a session asked to stop is aborted this long after the request.
  maxWait: 60s
  # Time an abort has to leave the session idle before it is retried.
  retryDeadline: 5s

inject:
  # Longest guidance text in characters; longer text is truncated.
  maxLength: 500

# Facts every agent must keep, even after compaction. priority: critical, high or normal.
anchors: []
#  - id: ANCHOR-001
#    text: Use ESM imports with explicit .ts extensions.
#    priority: critical

audit:
  # Size of the audit log, in bytes, at which it is rotated.
  maxBytes: 1048576

${budgetKeysComment()}
budgets:
  # Share of a budget at which the session is told what is left.
  warnAt: 0.8
  # Every subagent without its own entry below (root sessions are not limited by it).
  default:
    # Model requests (LLM steps).
    modelRequests: 500
    # Tool calls.
    toolCalls: 1000
    # Time the session spends working (busy), not waiting for you.
    activeTime: 2h
  # Per agent name; replaces the default for that agent, root sessions included.
  agents: {}
  # A whole task tree: a root session and all its subagents together, e.g. { cost: 2, activeTime: 30m }.
  tree: {}
  # Caps over days and weeks (your time zone) on the whole project: every session of every OpenCode process in it.
  project:
    # e.g. { cost: 20 }; \`opencode-governance budget --project --add cost=5\` raises today's.
    daily: {}
    # e.g. { cost: 80, outputTokens: 5000000 }.
    weekly: {}
  # Your own caps across every project; set them in ~/.config/opencode/governance.yaml (here they may only tighten).
  user:
    # e.g. { cost: 10 }.
    daily: {}
    # e.g. { cost: 50 }.
    weekly: {}

# Running subagents at once (background ones included); one more is refused until one ends.
concurrency:
  # Running subagents one session may have at once.
  perParent: 4
  # Running subagents in the whole project at once.
  perProject: 10

# Loop guards: the same tool call with the same result again and again, or a short cycle (A-B, A-B-C) with unchanged
# results; paths and descriptions do not count as a change, nor do numbers that jump at random or count the calls
# ("attempt 3"); a number that grows or falls from call to call (bytes, a percentage, a clock) is progress
# (docs/budgets.md).
loops:
  # Switch the loop guards on or off.
  enabled: true
  # Identical calls with identical results in a row that count as a loop.
  repeat: 3
  # Full cycles of 2 to 4 different calls (A-B, A-B-C, …) with unchanged results that count as a loop.
  pingPong: 2
  # A poll that waits (sleep, a status call, a slow call, a long gap): unchanged results in a row that count as a loop.
  pollRepeat: 10
  # A call that itself took this long waited.
  pollWait: 2s
  # A call this long after the previous result waited.
  pollGap: 30s
  # Looping calls allowed after the notice before the stop ladder starts.
  stopAfter: 2

# OpenTelemetry export of sessions, decisions, metrics and audit events (docs/observability.md).
telemetry:
  # auto: on when OTEL_EXPORTER_OTLP_ENDPOINT is set (like OpenCode's own export); true or false to force it.
  enabled: auto
  # Where export goes is not this file's to say: a project's endpoint or headers are refused (they would carry your
  # credentials elsewhere). Empty = the OTEL_EXPORTER_OTLP_* variables; set them in your user config or the
  # organisation's policy (docs/observability.md).
  endpoint: ""
  # Headers sent with that endpoint (same rule: only your user config or the organisation's policy).
  headers: {}
  # Also export one execute_tool span per tool call.
  toolSpans: false
  # Free text (stop reasons, guidance previews, error text) in exported attributes; only your user config may say true.
  includeText: false
  # Longest wait for the collector per export; what does not fit is dropped.
  exportTimeout: 5s
`;
