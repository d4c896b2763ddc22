import { coverageNotice, type NoticeHost as Host } from "../../governance/texts/coverage-notice.ts";
import path from "node:path";
import type { Coverage, CoverageEvent, CoverageMissing, CoverageSummary } from "../../governance/session/governance-coverage.ts";
import { coverageLine, coverageStep, EMPTY_COVERAGE } from "../../governance/session/governance-coverage.ts";
import { writeFileAtomic } from "../../governance/storage/atomic-write.ts";
import { ensureGovernanceDir } from "../../governance/storage/governance-paths.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { TimerHandle } from "../runtime/timers.ts";

/** Call ids per session kept to tell a gated call from an ungated one (a session has a few calls under way at most). */
const MAX_CALL_IDS = 64;
/** How long after a change the summary file is rewritten (never on the hot path: a timer, and at exit). */
export const COVERAGE_WRITE_MS = 15_000;
/** How soon a new "last session" is written: `status` in a session's first seconds had no coverage (walk 3). */
export const COVERAGE_FIRST_WRITE_MS = 2_000;

type PerSession = { c: Coverage; gated: Set<string>; done: Set<string>; children: Set<string>; hostChildren: Set<string> };

/** `coverage.json` in the state folder: the last session's coverage, for `doctor` and `status`. */
export const coverageFile = (root: string) => path.join(root, "coverage.json");

/**
 * Feeds {@link coverageStep} from both adapters (plugin/opencode-1/setup.ts for OpenCode 1, plugin/opencode-2/ for OpenCode
 * 2) and runs its effect: one `governance_gap` audit line per missing kind per session, and ONE notice per instance
 * to the user (a toast on OpenCode 1; `host_notice` on OpenCode 2, which this package's TUI entry shows). Memory is
 * per session and released with the session (`forget`); the call-id sets are bounded. Nothing is written per event:
 * the summary file is written by a timer after a change and at every flush (exit included).
 */
export class CoverageWatch {
  readonly #sessions = new Map<string, PerSession>();
  /** Sessions the host created as some session's child: "last session" in the summary is a root. */
  readonly #isChild = new Set<string>();
  #last: string | undefined;
  #gaps = 0;
  #noticed = false;
  #dirty = false;
  #timer: TimerHandle | undefined;

  constructor(
    private readonly ctx: PluginContext,
    private readonly host: () => Host,
  ) {}

  #of(sessionId: string): PerSession {
    let s = this.#sessions.get(sessionId);
    if (!s) {
      s = { c: EMPTY_COVERAGE, gated: new Set(), done: new Set(), children: new Set(), hostChildren: new Set() };
      this.#sessions.set(sessionId, s);
    }
    return s;
  }

  #feed(sessionId: string, s: PerSession, ev: CoverageEvent): void {
    const { next, gaps } = coverageStep(s.c, ev);
    s.c = next;
    this.#dirty = true;
    this.#timer ??= this.ctx.timers.setTimeout(() => this.saveSummary(), COVERAGE_WRITE_MS);
    for (const missing of gaps) this.#gap(sessionId, missing);
  }

  /** The host reported a model step of the session. */
  hostStep(sessionId: string): void {
    if (!this.#isChild.has(sessionId) && this.#last !== sessionId) {
      this.#last = sessionId;
      this.ctx.timers.clear(this.#timer);
      this.#timer = this.ctx.timers.setTimeout(() => this.saveSummary(), COVERAGE_FIRST_WRITE_MS);
    }
    const s = this.#of(sessionId);
    this.#feed(sessionId, s, { type: "host_step" });
  }

  /** This step's request carried the prefix. */
  prefixed(sessionId: string): void {
    const s = this.#of(sessionId);
    this.#feed(sessionId, s, { type: "prefixed" });
  }

  /** The status-note hook ran for this step. */
  noted(sessionId: string): void {
    const s = this.#of(sessionId);
    this.#feed(sessionId, s, { type: "noted" });
  }

  /** The gate (`execute.before`) saw this call. */
  gated(sessionId: string, callId: string | undefined): void {
    if (!callId) return;
    const s = this.#of(sessionId);
    if (s.gated.size >= MAX_CALL_IDS) s.gated.clear();
    s.gated.add(callId);
  }

  /** The host reported this call finished (once per call id; repeats are ignored). */
  hostTool(sessionId: string, callId: string): void {
    const s = this.#of(sessionId);
    if (s.done.has(callId)) return;
    if (s.done.size >= MAX_CALL_IDS) s.done.clear();
    s.done.add(callId);
    const gated = s.gated.delete(callId);
    this.#feed(sessionId, s, { type: "host_tool", gated });
  }

  /** Governance linked `child` to `parent` (its record names the parent). */
  linked(parent: string, child: string): void {
    this.#isChild.add(child);
    const s = this.#of(parent);
    if (s.children.size >= MAX_CALL_IDS) s.children.clear();
    s.children.add(child);
  }

  /** A confined shell call ran without its shell entering the sandbox (the host never named it to the env hook). */
  unconfined(sessionId: string): void {
    this.#feed(sessionId, this.#of(sessionId), { type: "shell_unconfined" });
  }

  /** The host reported a child (created naming its parent, or a task result): counted once, linked here or `onDisk`. */
  hostChild(parent: string, child: string, onDisk: boolean): void {
    this.#isChild.add(child);
    const s = this.#of(parent);
    if (s.hostChildren.has(child)) return;
    if (s.hostChildren.size >= MAX_CALL_IDS) s.hostChildren.clear();
    s.hostChildren.add(child);
    this.#feed(parent, s, { type: "host_child", linked: s.children.has(child) || onDisk });
  }

  /** The host created a child: counted now, not at its task's result, which an Escape never delivers (issue 39). */
  async afterCreated(child: string, parent: string | null | undefined): Promise<void> {
    if (!parent) return;
    const record = await this.ctx.store.read(child).catch(() => undefined);
    const linked = record?.parentId === parent;
    if (linked) this.linked(parent, child);
    this.hostChild(parent, child, linked);
  }

  /** A delegation result named its child: was it linked here (or by an earlier instance, its record says so)? */
  async reported(parent: string, child: unknown): Promise<void> {
    if (typeof child !== "string" || child === "") return;
    const here = this.#sessions.get(parent)?.children.has(child) ?? false;
    const onDisk = here || (await this.ctx.store.read(child).catch(() => undefined))?.parentId === parent;
    this.hostChild(parent, child, onDisk);
  }

  #gap(sessionId: string, missing: CoverageMissing): void {
    this.#gaps++;
    const host = this.host();
    void this.ctx.record("governance_gap", { sessionId, missing, host: host.line, hostVersion: host.version });
    if (!this.#noticed) void this.ctx.api.toast(coverageNotice(missing, host), "warning", sessionId).catch(() => undefined);
    this.#noticed = true;
  }

  /** The line `status` prints for a session, or undefined when the host reported nothing for it. */
  line(sessionId: string): string | undefined {
    const s = this.#sessions.get(sessionId);
    return s ? coverageLine(s.c) : undefined;
  }

  summary(): CoverageSummary {
    const s = this.#last ? this.#sessions.get(this.#last) : undefined;
    const c = s?.c;
    return {
      schemaVersion: 1,
      at: this.ctx.clock.now(),
      host: this.host(),
      last:
        c && this.#last
          ? {
              sessionId: this.#last,
              steps: c.steps,
              prefixed: c.prefixed,
              noted: c.noted,
              tools: c.tools,
              gated: c.gated,
              children: c.children,
              linked: c.linked,
              gaps: [...c.reported],
            }
          : null,
      gaps: this.#gaps,
    };
  }

  /**
   * Writes the summary when it changed since the last write (a timer 15 s after the first change, 2 s when a new
   * session became the last one, and every flush:
   * the runtime's exit included), into the checked governance folder like every write (never through a planted
   * symlink). Never throws: a view for `doctor` (the audit line is the record); a failed write is tried again later.
   */
  async saveSummary(): Promise<void> {
    this.ctx.timers.clear(this.#timer);
    this.#timer = undefined;
    if (!this.#dirty) return;
    this.#dirty = false;
    await ensureGovernanceDir(this.ctx.paths)
      .then(() => writeFileAtomic(coverageFile(this.ctx.paths.root), `${JSON.stringify(this.summary())}\n`))
      .catch(() => {
        this.#dirty = true;
      });
  }

  forget(sessionId: string): void {
    if (sessionId === this.#last) return; // kept for the summary until another session takes its place
    this.#sessions.delete(sessionId);
    this.#isChild.delete(sessionId);
  }

  size(): number {
    return this.#sessions.size;
  }
}
