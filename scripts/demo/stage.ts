import {
  auditEvents,
  projectCli,
  sessionRecord,
  waitFor,
  type ModelRequest,
  type ScriptedModel,
  type ServeHandle,
  type TestProject,
} from "../../test/harness/index.ts";
import { turnMarker } from "./model-script.ts";
import { bold, dim, expect, short, type Timeline, yellow } from "./timeline.ts";

export const COORDINATOR = "governance-coordinator";

type AuditEvent = ReturnType<typeof auditEvents>[number];

/**
 * Everything a scene needs to drive OpenCode and read what governance did: the scripted model (what the model was
 * shown), the project's governance files (records, audit log), the running `opencode serve`, and the CLI.
 */
export class Stage {
  serve: ServeHandle | undefined;

  constructor(
    readonly t: Timeline,
    readonly model: ScriptedModel,
    readonly project: TestProject,
  ) {}

  get http() {
    expect(this.serve, "opencode serve is not running");
    return this.serve.http;
  }

  /** Index to pass as `from` so a scene only looks at the requests it caused. */
  mark(): number {
    return this.model.requests.length;
  }

  /** Agent-step requests of one session since `from`. */
  stepsOf(id: string, from = 0): ModelRequest[] {
    return this.model.requests.slice(from).filter((r) => r.kind === "agent" && r.sessionId === id);
  }

  /** The first agent request since `from` whose turn plays `marker` (the demo's prompt, or a child's task prompt, starts a line with it). */
  requestWith(marker: string, from = 0): ModelRequest | undefined {
    return this.model.requests.slice(from).find((r) => r.kind === "agent" && turnMarker(r) === marker);
  }

  async sessionWith(marker: string, from = 0, timeoutMs = 10_000): Promise<string> {
    return waitFor(() => this.requestWith(marker, from)?.sessionId, `a session prompted with ${marker}`, timeoutMs);
  }

  audit(): AuditEvent[] {
    return auditEvents(this.project.governanceDir);
  }

  /** Audit events of a type, optionally of one session and written at or after `since` (epoch ms). */
  auditOf(type: string, opts: { sessionId?: string; since?: number } = {}): AuditEvent[] {
    return this.audit().filter((e) => e.type === type && (!opts.sessionId || e.sessionId === opts.sessionId) && (!opts.since || e.at >= opts.since));
  }

  record(id: string): Record<string, any> | undefined {
    return sessionRecord(this.project.governanceDir, id);
  }

  async recordWhere(id: string, what: string, pred: (r: Record<string, any>) => boolean, timeoutMs = 8_000): Promise<Record<string, any>> {
    return waitFor(
      () => {
        const r = this.record(id);
        return r && pred(r) ? r : undefined;
      },
      what,
      timeoutMs,
    );
  }

  /**
   * A synchronous prompt as the coordinator, bounded: a stuck turn is aborted and reported instead of hanging the demo.
   * A turn takes 3-15 s; 20 s was too short on a loaded 2-core machine (load 10: scene 2 timed out with nothing wrong).
   */
  async prompt(id: string, text: string, ms = 60_000): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the prompt did not finish in ${ms / 1000} s`)), ms);
    });
    try {
      await Promise.race([this.http.prompt(id, text, { agent: COORDINATOR }), timeout]);
    } catch (error) {
      await this.http.abort(id).catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** `node dist/cli/main.js <args> --dir <project>`: the CLI a user runs, as a separate process. */
  async cli(...args: string[]): Promise<{ code: number; out: string }> {
    // In OpenCode's user environment (HOME/XDG): the CLI signs requests with that user's key.
    const r = await projectCli(this.project, args, { timeoutMs: 10_000 });
    return { code: r.code, out: `${r.stdout}${r.stderr}`.trim() };
  }

  /** A session's tool results as OpenCode stored them (what the user sees in the transcript), oldest first. */
  async toolOutputs(id: string): Promise<string[]> {
    const messages = await this.http.messages(id);
    return messages.flatMap((m) =>
      m.parts
        .filter((p) => p.type === "tool")
        .map((p) => {
          const state = (p.state ?? {}) as { output?: unknown; error?: unknown };
          return String(state.output ?? state.error ?? "");
        }),
    );
  }

  /**
   * Prints audit lines of the given types as the plugin writes them, while `body` runs, so the timeline shows when
   * governance acted, not when the demo looked. `only`: the lines of one scene's sessions, when others run meanwhile.
   */
  async tail<T>(types: readonly string[], body: () => Promise<T>, only: (e: AuditEvent) => boolean = () => true): Promise<T> {
    const wanted = new Set(types);
    let seen = this.audit().length;
    const flush = () => {
      const all = this.audit();
      for (const e of all.slice(seen)) if (wanted.has(e.type) && only(e)) this.t.line(auditLine(e));
      seen = all.length;
    };
    const timer = setInterval(flush, 100);
    try {
      return await body();
    } finally {
      clearInterval(timer);
      flush();
    }
  }
}

/** One audit line, compact: ids shortened, long strings clipped, empty fields left out. */
export function auditLine(e: Record<string, unknown>): string {
  const { at: _at, type, sessionId, ...rest } = e;
  const fields = Object.entries(rest)
    .filter(([, v]) => v !== undefined && v !== null && !(typeof v === "object" && Object.keys(v as object).length === 0))
    .map(
      ([k, v]) =>
        `${k}=${typeof v === "string" ? (v.startsWith("ses_") ? short(v) : JSON.stringify(v.length > 60 ? `${v.slice(0, 59)}…` : v)) : JSON.stringify(v).replace(/ses_[A-Za-z0-9]+/g, (id) => short(id))}`,
    )
    .join(" ");
  return `audit ${bold(String(type))} ${sessionId ? short(String(sessionId)) : ""} ${dim(fields)}`.replace(/\s+$/, "");
}

/**
 * Audit events that explain a failed scene: what governance refused, rejected or could not do. Printed under the scene
 * that failed, so its cause is read from what the plugin wrote, not guessed.
 */
export const TROUBLE = new Set([
  "config_problem",
  "hook_error",
  "store_problem",
  "loop_detected",
  "delegation_blocked",
  "emergency_halt",
  "spawn_refused_concurrency",
  "budget_exceeded",
  "session_error",
  "stop_failed",
  "illegal_transition",
  "control_refused",
  "directive_rejected",
  "governance_gap",
  "tool_blocked",
]);

/**
 * What a failed scene prints under it: the audit lines of {@link TROUBLE} the scene's time wrote (a `config_problem`
 * with its line and column, a `loop_detected`, a refusal), at most 8, or that there were none — the cause read from
 * what the plugin recorded, never a guess such as "the plugin did not load" (issue 39).
 */
export function sceneTrouble(events: readonly Record<string, unknown>[]): string[] {
  const trouble = events.filter((e) => TROUBLE.has(String(e.type)));
  if (trouble.length === 0) return [yellow("the audit log recorded no refusal, problem or hook error during this scene")];
  return [
    yellow(`the audit log during this scene (${trouble.length} refusal(s), problem(s) or error(s)):`),
    ...trouble.slice(0, 8).map((e) => `  ${auditLine(e)}`),
    ...(trouble.length > 8 ? [dim(`  … ${trouble.length - 8} more in .opencode/governance/audit.log`)] : []),
  ];
}
