import * as z from "../zod.ts";

/**
 * Governance that notices when it is not governing (issue 25 item 5). A plugin that loads and then quietly does
 * nothing is the worst failure a governance tool can have, and every host update can cause it (OpenCode 1's hooks are
 * `experimental.*`; OpenCode 2 changed the `context` payload). So, per session, what the HOST reports (model steps,
 * tool calls, child sessions — from its own events and results) is set against what governance DID (steps that carried
 * the prefix, steps the status-note hook saw, tool calls the gate saw, children linked). The rule is here, pure and
 * O(1) per event; plugin/sessions/coverage-watch.ts feeds it and runs its one effect (a `governance_gap` line).
 *
 * Tolerance: a host event may be handled after the hooks of later steps ran (events are delivered asynchronously),
 * and one step of a session may legitimately carry no prefix (OpenCode 1's compaction summarizer). So a step is
 * "missing" only when fewer steps carried the prefix than the host reported AND none did since the previous host
 * step; a gap is TWO such steps in a row (two host-reported tool calls in a row the gate did not see, likewise). A child the host
 * reports that governance never linked is a gap at once (its link was due long before the result came back).
 */
/**
 * `sandbox`: a shell the gate confined through its environment (decision 0071) ran, and the host's environment hook
 * never named it — so it ran outside the sandbox. One such command is a gap at once (no tolerance: it is not a late
 * event but a command that already ran); the adapter falls back to the command rewrite for every later call.
 */
export const CoverageMissing = z.enum(["prefix", "status_note", "tool_gate", "child_link", "sandbox"]);
export type CoverageMissing = z.infer<typeof CoverageMissing>;

export type Coverage = {
  /** Model steps the host reported (OpenCode 1: `step-start` parts; OpenCode 2: `session.step.started`). */
  readonly steps: number;
  /** Steps whose request carried the governance prefix. */
  readonly prefixed: number;
  /** Steps the status-note hook saw (OpenCode 1: messages transform; OpenCode 2: the same `context` hook). */
  readonly noted: number;
  /** Tool calls the host reported finished (OpenCode 1: tool parts; OpenCode 2: `session.tool.success|failed`). */
  readonly tools: number;
  /** Of those, calls the gate (`execute.before`) saw. */
  readonly gated: number;
  /** Children the host reported (a delegation result naming its child session). */
  readonly children: number;
  /** Of those, children governance had linked to this session. */
  readonly linked: number;
  /** Host steps in a row with no prefix / no status-note hook since the previous one; host tool calls in a row ungated. */
  readonly streak: { readonly prefix: number; readonly note: number; readonly tool: number };
  /** `prefixed` / `noted` as they were at the last host step. */
  readonly mark: { readonly prefixed: number; readonly noted: number };
  /** Kinds already reported for this session: one line per kind per session, not one per step. */
  readonly reported: readonly CoverageMissing[];
};

export type CoverageEvent =
  | { type: "host_step" }
  | { type: "prefixed" }
  | { type: "noted" }
  | { type: "host_tool"; gated: boolean }
  | { type: "host_child"; linked: boolean }
  | { type: "shell_unconfined" };

export const EMPTY_COVERAGE: Coverage = {
  steps: 0,
  prefixed: 0,
  noted: 0,
  tools: 0,
  gated: 0,
  children: 0,
  linked: 0,
  streak: { prefix: 0, note: 0, tool: 0 },
  mark: { prefixed: 0, noted: 0 },
  reported: [],
};

/** Two in a row: the tolerance above. */
export const GAP_STREAK = 2;

/** The next coverage and the kinds newly missing (each reported once per session). */
export function coverageStep(c: Coverage, ev: CoverageEvent): { next: Coverage; gaps: CoverageMissing[] } {
  switch (ev.type) {
    case "prefixed":
      return { next: { ...c, prefixed: c.prefixed + 1 }, gaps: [] };
    case "noted":
      return { next: { ...c, noted: c.noted + 1 }, gaps: [] };
    case "host_step": {
      const steps = c.steps + 1;
      // Nothing missing while every step so far has its prefix (the hooks ran ahead of late events), or when one came
      // since the previous host step; otherwise one more step in a row without it.
      const miss = (done: number, mark: number, streak: number) => (done >= steps || done !== mark ? 0 : streak + 1);
      const streak = {
        ...c.streak,
        prefix: miss(c.prefixed, c.mark.prefixed, c.streak.prefix),
        note: miss(c.noted, c.mark.noted, c.streak.note),
      };
      const due: CoverageMissing[] = [];
      if (streak.prefix >= GAP_STREAK) due.push("prefix");
      if (streak.note >= GAP_STREAK) due.push("status_note");
      return report({ ...c, steps, streak, mark: { prefixed: c.prefixed, noted: c.noted } }, due);
    }
    case "host_tool": {
      const tool = ev.gated ? 0 : c.streak.tool + 1;
      const next = { ...c, tools: c.tools + 1, gated: c.gated + (ev.gated ? 1 : 0), streak: { ...c.streak, tool } };
      return report(next, tool >= GAP_STREAK ? ["tool_gate"] : []);
    }
    case "host_child": {
      const next = { ...c, children: c.children + 1, linked: c.linked + (ev.linked ? 1 : 0) };
      return report(next, ev.linked ? [] : ["child_link"]);
    }
    case "shell_unconfined":
      return report(c, ["sandbox"]);
  }
}

function report(next: Coverage, due: CoverageMissing[]): { next: Coverage; gaps: CoverageMissing[] } {
  const gaps = due.filter((m) => !next.reported.includes(m));
  return gaps.length === 0 ? { next, gaps } : { next: { ...next, reported: [...next.reported, ...gaps] }, gaps };
}

/** One line a person reads: "prefix on 14/14 steps, 9/9 tool calls gated, 2/2 children linked". */
export function coverageLine(c: Pick<Coverage, "steps" | "prefixed" | "tools" | "gated" | "children" | "linked">): string {
  return `prefix on ${Math.min(c.prefixed, c.steps)}/${c.steps} steps, ${c.gated}/${c.tools} tool calls gated, ${c.linked}/${c.children} children linked`;
}

/** What `coverage.json` holds (written off the hot path; read by `doctor`, `status`). */
export const CoverageSummary = z.object({
  schemaVersion: z.literal(1),
  at: z.number(),
  host: z.object({ line: z.number(), version: z.string().nullable() }),
  last: z
    .object({
      sessionId: z.string(),
      steps: z.number(),
      prefixed: z.number(),
      noted: z.number(),
      tools: z.number(),
      gated: z.number(),
      children: z.number(),
      linked: z.number(),
      gaps: z.array(CoverageMissing),
    })
    .nullable(),
  gaps: z.number(),
});
export type CoverageSummary = z.infer<typeof CoverageSummary>;
