/**
 * The two machine events of every model step, `model_step` and `tool_before`, checked by hand: a zod parse of each
 * (the machine's `SessionEvent`) was most of the machine's time on a step (docs/performance.md, issue 31). The check
 * answers only when the event is certainly valid, with what the schema's parse would give; anything else — another
 * type, a doubtful field — goes to the schema, which says why it is not valid. test/governance/session/step-events.test.ts
 * holds this to the schema on generated inputs.
 */
export type StepEvent =
  | { type: "model_step"; at: number; phase?: string }
  | { type: "tool_before"; at: number; tool: string; callId: string; summary: string; role?: "primary" | "delegating" | "leaf"; files?: string[] };

const ROLES: ReadonlySet<unknown> = new Set(["primary", "delegating", "leaf"]);
const PHASE_MAX = 60;

/** A phase as `PhaseName` gives it (trimmed, 1–60 characters), or null when the schema must decide. */
function phaseOf(v: unknown): string | undefined | null {
  if (v === undefined) return undefined;
  if (typeof v !== "string") return null;
  const t = v.trim();
  return t.length >= 1 && t.length <= PHASE_MAX ? t : null;
}

export function checkedStepEvent(e: unknown): StepEvent | undefined {
  if (typeof e !== "object" || e === null) return undefined;
  const o = e as Record<string, unknown>;
  if (!Number.isSafeInteger(o.at)) return undefined;
  const at = o.at as number;
  if (o.type === "model_step") {
    const phase = phaseOf(o.phase);
    if (phase === null) return undefined;
    return "phase" in o ? { type: "model_step", at, phase } : { type: "model_step", at };
  }
  if (o.type === "tool_before") {
    if (typeof o.tool !== "string" || typeof o.callId !== "string" || typeof o.summary !== "string") return undefined;
    const files = filesOf(o);
    if (files === null) return undefined;
    const base = { type: "tool_before" as const, at, tool: o.tool, callId: o.callId, summary: o.summary, ...(files ? { files } : {}) };
    if (!("role" in o)) return base;
    if (o.role === undefined) return { ...base, role: undefined };
    return ROLES.has(o.role) ? { ...base, role: o.role as "primary" | "delegating" | "leaf" } : undefined;
  }
  return undefined;
}

/** A file tool's written paths (at most 50 strings), absent, or null when the schema must decide. */
function filesOf(o: Record<string, unknown>): string[] | undefined | null {
  if (!("files" in o) || o.files === undefined) return undefined;
  const f = o.files;
  return Array.isArray(f) && f.length <= 50 && f.every((p) => typeof p === "string") ? (f as string[]) : null;
}
