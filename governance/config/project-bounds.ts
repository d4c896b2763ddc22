/**
 * How far a repository's `.opencode/governance.yaml` may go ALONE (issue 20 §2): where neither the organisation's
 * policy nor the user's own file sets one of these, the bound below is the project's ceiling. A layer above that sets
 * the key replaces the bound (the user's `enforcement: log-only` allows a project's log-only). policy-merge.ts applies
 * them with every other ceiling.
 *
 * | setting | a project file may alone | beyond: only the user's or the organisation's file |
 * |---|---|---|
 * | `enforcement` | `enforce` | `log-only` (enforcement off) |
 * | `audit.maxBytes` | 1 MiB (the default) or more | less than 1 MiB (down to 4 KiB) |
 * | `stop.deadline`, `stop.retryDeadline` | up to 60 s | longer (a stop that never escalates) |
 * | `stop.maxWait` | up to 120 s | longer (a lively session that never gets hard-stopped) |
 * | `telemetry.endpoint`, `telemetry.headers` | nothing | an endpoint and its headers (a project's would redirect the user's credentials) |
 * | `telemetry.includeText` | `false` | `true` (free text in exported attributes) |
 */
export const PROJECT_MIN_AUDIT_BYTES = 1_048_576;
export const PROJECT_MAX_STOP_DEADLINE_MS = 60_000;
export const PROJECT_MAX_STOP_WAIT_MS = 120_000;

/** The built-in ceilings of a project's file, by dotted path (policy-merge.ts reads them). */
export const BUILT_IN_CEILINGS: Readonly<Record<string, string | number | boolean>> = {
  enforcement: "enforce",
  "audit.maxBytes": PROJECT_MIN_AUDIT_BYTES,
  "stop.deadline": PROJECT_MAX_STOP_DEADLINE_MS,
  "stop.retryDeadline": PROJECT_MAX_STOP_DEADLINE_MS,
  "stop.maxWait": PROJECT_MAX_STOP_WAIT_MS,
  "telemetry.includeText": false,
};
