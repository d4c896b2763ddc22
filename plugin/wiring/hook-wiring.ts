import { contain, DONE, type HookErrorSink } from "../runtime/contain.ts";
import type { InFlight } from "../runtime/in-flight.ts";
import type { CoverageWatch } from "../sessions/coverage-watch.ts";
import type { Telemetry } from "../telemetry/telemetry.ts";
import type { HookJob } from "./host-adapter.ts";

/** What the wiring uses of a runtime (the `Runtime` satisfies it). */
export type WiringDeps = {
  readonly inFlight: Pick<InFlight, "track">;
  readonly telemetry: Pick<Telemetry, "timed">;
  readonly coverage: Pick<CoverageWatch, "prefixed" | "noted" | "gated" | "unconfined" | "reported">;
};

/**
 * What a hook call did that governance coverage counts (plugin/sessions/coverage-watch.ts), in host-neutral terms: an
 * adapter's handler returns it (or its `before` does, for what must count even when the handler blocks), and the
 * wiring alone reports it. Coverage sets it against what the host reported, and says a gap (`governance_gap`).
 */
export type Covered = {
  readonly sessionId: string;
  /** The model step carried the governance prefix. */
  readonly prefixed?: boolean;
  /** The step's notes were prepared (the status note could be carried). */
  readonly noted?: boolean;
  /** The tool call with this id passed the gate (counted before the gate may refuse it). */
  readonly gated?: string | undefined;
  /** A shell call governance confined ran outside the sandbox (the host never passed it to its shell hook). */
  readonly unconfined?: boolean;
  /** A delegation finished; its result names this child (as the host reported it, checked by coverage). */
  readonly delegated?: { readonly childId: unknown };
};

// biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to count is an ordinary `async () => {}`.
type Answer = Covered | undefined | void;
type Handler<A extends unknown[]> = (...args: A) => Promise<Answer> | Answer;

/** The name `hook_error` gives a hook: the host's, without OpenCode 1's `experimental.` (`system.transform`), as before. */
const auditName = (hook: string): string => hook.replace(/^experimental\.(chat\.)?/, "");

/**
 * One wiring for every hook of every host (Conventions 19): each host hook is wrapped the same way — contained (an
 * unexpected error is audited as `hook_error` and the user's session goes on: plugin/runtime/contain.ts), tracked
 * (an exit waits for the calls under way: plugin/runtime/in-flight.ts), timed under its JOB's name
 * (`governance.hook.duration`, the same names on every host) and its coverage reported from what it returns. The job
 * of a host hook comes from the adapter's `jobs` table; a hook the table does not name is a bug found at setup.
 */
export class HookWiring<Hook extends string> {
  readonly #rt: WiringDeps;
  readonly #jobOf = new Map<string, HookJob>();
  readonly sink: HookErrorSink;

  constructor(rt: WiringDeps, jobs: { readonly [J in HookJob]: readonly Hook[] }, sink: HookErrorSink) {
    this.#rt = rt;
    this.sink = sink;
    for (const [job, hooks] of Object.entries(jobs) as [HookJob, readonly Hook[]][]) for (const hook of hooks) this.#jobOf.set(hook, job);
  }

  /** The job a host hook does (its metric name). */
  jobOf(hook: Hook): HookJob {
    const job = this.#jobOf.get(hook);
    if (!job) throw new Error(`governance: host hook ${hook} is in no job of its adapter's table`);
    return job;
  }

  /**
   * `hook` contained, tracked, timed and its coverage reported. `before` runs first, inside the containment: what
   * coverage must count even when the handler refuses the call (a gated tool call).
   */
  hook<A extends unknown[]>(hook: Hook, fn: Handler<A>, before?: (...args: A) => Promise<Answer> | Answer): (...args: A) => Promise<void> {
    const job = this.jobOf(hook);
    const report = (c: Answer) => this.#report(c);
    // Most calls answer at once with nothing to count (issue 31): no promise is made for them.
    const after = (answer: Promise<Answer> | Answer): Promise<void> | undefined =>
      answer instanceof Promise ? answer.then(report) : answer ? (report(answer) ?? DONE) : undefined;
    const run = (...args: A): Promise<void> | undefined => {
      const first = before?.(...args);
      if (first instanceof Promise) return first.then(report).then(() => after(fn(...args)));
      if (first) void report(first);
      return after(fn(...args));
    };
    return this.#rt.telemetry.timed(job, this.#rt.inFlight.track(contain(auditName(hook), run, this.sink)));
  }

  /**
   * `hook` tracked and timed, deliberately NOT contained: its throw reaches the host, which turns it into the call's
   * error (OpenCode 2's `create.before`: a shell call governance must confine and cannot must not run).
   */
  uncontained<A extends unknown[]>(hook: Hook, fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
    return this.#rt.telemetry.timed(
      this.jobOf(hook),
      this.#rt.inFlight.track(async (...args: A) => fn(...args)),
    );
  }

  /**
   * A host entry outside the jobs, called once at start (OpenCode 1's `config`): contained and tracked like every hook,
   * not timed (nothing per call to measure). The adapter's `outsideJobs` says why for each.
   */
  atStart<A extends unknown[]>(hook: Hook, fn: (...args: A) => Promise<void> | undefined): (...args: A) => Promise<void> {
    return this.#rt.inFlight.track(contain(auditName(hook), fn, this.sink));
  }

  #report(c: Answer): Promise<void> | undefined {
    if (!c) return undefined;
    const { coverage } = this.#rt;
    const id = c.sessionId;
    if (c.gated !== undefined) coverage.gated(id, c.gated);
    if (c.prefixed) coverage.prefixed(id);
    if (c.noted) coverage.noted(id);
    if (c.unconfined) coverage.unconfined(id);
    return c.delegated ? coverage.reported(id, c.delegated.childId) : undefined;
  }
}
