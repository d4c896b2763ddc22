import { describe, expect, it } from "vitest";
import { ConcurrencyConfig } from "../../../governance/config/budget-config.ts";
import { decideConcurrency, decideConcurrentSpawn, PROJECT_SAMPLE, reservationTaken } from "../../../governance/budget/concurrency.ts";

describe("concurrency refusal: the audit says what the text says (issue 28 §2)", () => {
  it("perProject: 2 running and 1 starting are 3 in the text, the audit and the toast", () => {
    const d = decideConcurrency({
      parentRunning: [],
      projectRunning: 3,
      projectSample: [
        { sessionId: "ses_a0000000000000000000000001", agent: "general" },
        { sessionId: "ses_b0000000000000000000000001", agent: "general" },
      ],
      config: ConcurrencyConfig.parse({ perProject: 3 }),
      targetAgent: "general",
    });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.message).toContain("The project already has 3 running subagents");
    const audit = d.effects.find((e) => e.type === "audit") as { data: Record<string, unknown> };
    expect(audit.data).toMatchObject({ scope: "project", limit: 3, running: 3 });
    expect(d.effects.find((e) => e.type === "toast")).toMatchObject({ message: expect.stringContaining("3 subagents already running") });
  });
  it("a count above the limit (the limit was lowered) is said as it is", () => {
    const running = [1, 2, 3, 4, 5].map((i) => ({ sessionId: `ses_c000000000000000000000000${i}`, agent: "general" }));
    const d = decideConcurrency({
      parentRunning: running,
      projectRunning: 5,
      projectSample: running,
      config: ConcurrencyConfig.parse({ perParent: 2 }),
      targetAgent: "x",
    });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.message).toContain("You already have 5 running subagents, and at most 2 are allowed at once");
  });
});

const sub = (i: number, agent = "general") => ({ sessionId: `ses_d${String(i).padStart(25, "0")}`, agent });

describe("decideConcurrency: the limits, at their boundary (issue 29)", () => {
  const config = ConcurrencyConfig.parse({ perParent: 2, perProject: 3 });
  const decide = (parent: number, project: number) =>
    decideConcurrency({
      parentRunning: Array.from({ length: parent }, (_, i) => sub(i)),
      projectRunning: project,
      projectSample: [],
      config,
      targetAgent: "t",
    });

  it.each([
    [0, 0, true],
    [1, 2, true],
    [2, 2, false],
    [1, 3, false],
    [5, 9, false],
  ])("%i running for the parent, %i in the project → allowed: %s", (parent, project, ok) => {
    expect(decide(parent, project).ok).toBe(ok);
  });

  it("when both are full the parent's limit is the one said (it is the one the model can act on)", () => {
    const d = decide(2, 3);
    if (d.ok) throw new Error("expected a refusal");
    expect(d.scope).toBe("parent");
    expect(d.effects[0]).toEqual({ type: "audit", event: "spawn_refused_concurrency", data: { scope: "parent", limit: 2, running: 2, targetAgent: "t" } });
    expect(d.effects[1]).toMatchObject({ type: "toast", variant: "warning", message: expect.stringContaining("this session; limit 2") });
  });
});

describe("decideConcurrentSpawn: what counts as running", () => {
  const config = ConcurrencyConfig.parse({ perParent: 2, perProject: 50 });
  const PARENT = "ses_parent00000000000000000001";
  const OTHER = "ses_other000000000000000000001";

  it("a reservation (a spawn allowed, its child not created yet) counts for its parent as `(starting)`", () => {
    const running = new Map([[sub(1).sessionId, { parentId: PARENT, agent: "explore" }]]);
    expect(decideConcurrentSpawn({ parentId: PARENT, running, spawning: [], config, targetAgent: "t" }).ok).toBe(true);
    const d = decideConcurrentSpawn({ parentId: PARENT, running, spawning: [{ parentId: PARENT, agent: "general" }], config, targetAgent: "t" });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.message).toContain("You already have 2 running subagents");
    expect(d.message).toContain(sub(1).sessionId);
    expect(d.message).toMatch(/general \(/);
  });

  it("another parent's children count for the project only; the project's text shows a sample, the count is all", () => {
    const running = new Map(Array.from({ length: 30 }, (_, i) => [sub(i).sessionId, { parentId: OTHER, agent: "general" }] as const));
    const spawning = Array.from({ length: 5 }, () => ({ parentId: OTHER, agent: "explore" }));
    expect(decideConcurrentSpawn({ parentId: PARENT, running, spawning, config, targetAgent: "t" }).ok).toBe(true);
    const d = decideConcurrentSpawn({ parentId: PARENT, running, spawning, config: { ...config, perProject: 35 }, targetAgent: "t" });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.effects[0]).toMatchObject({ data: { scope: "project", limit: 35, running: 35 } });
    const shown = d.message.match(/ses_d\d+/g) ?? [];
    expect(shown.length).toBeLessThanOrEqual(PROJECT_SAMPLE);
    expect(shown.length).toBeGreaterThan(0);
  });
});

describe("reservationTaken: a subagent that starts running counts once", () => {
  const P = "ses_p0000000000000000000000001";
  const Q = "ses_q0000000000000000000000001";
  const OLD = "ses_o0000000000000000000000001";
  const spawning = [
    ["c1", { parentId: P, agent: "general", continues: "ses_missing000000000000000001" }],
    ["c2", { parentId: P, agent: "general", continues: OLD }],
    ["c3", { parentId: P, agent: "general" }],
    ["c4", { parentId: Q, agent: "general" }],
  ] as const;

  it("a continued session takes the reservation naming it, whoever asked and whatever its parent", () => {
    expect(reservationTaken(spawning, { sessionId: OLD, parentId: P, created: false })).toBe("c2");
    expect(reservationTaken(spawning, { sessionId: OLD, parentId: Q, created: false })).toBe("c2");
  });
  it("a new session takes its parent's reservation that continues nothing, else one whose task_id named no session", () => {
    expect(reservationTaken(spawning, { sessionId: "ses_n0000000000000000000000001", parentId: P, created: true })).toBe("c3");
    expect(reservationTaken(spawning.slice(0, 2), { sessionId: "ses_n0000000000000000000000001", parentId: P, created: true })).toBe("c1");
    expect(reservationTaken(spawning, { sessionId: "ses_n0000000000000000000000001", parentId: Q, created: true })).toBe("c4");
  });
  it("a session busy again on its own, or a new one whose parent asked for nothing, takes none", () => {
    expect(reservationTaken(spawning, { sessionId: "ses_n0000000000000000000000001", parentId: P, created: false })).toBeUndefined();
    expect(
      reservationTaken(spawning, { sessionId: "ses_n0000000000000000000000001", parentId: "ses_r0000000000000000000000001", created: true }),
    ).toBeUndefined();
  });
});
