import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";
import type { Effect } from "../../../governance/session/effects.ts";
import { type EffectHandlers, EffectRunner } from "../../../plugin/sessions/effect-runner.ts";
import { REPO_ROOT } from "../../harness/paths.ts";

/** A runner that only runs (issue 29 item 3): the composition root hands it the handlers; it imports none. */
test("the effect runner imports no handler: only types", () => {
  const text = readFileSync(join(REPO_ROOT, "plugin/sessions/effect-runner.ts"), "utf8");
  const values = ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((spec) => !new RegExp(`import type [^;]*from "${spec.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}"`).test(text));
  expect(values).toEqual([]);
});

test("it runs the handed handlers in order; a failing or missing one is reported and the rest still run", async () => {
  const reported: string[] = [];
  const ctx = { reportHookError: (where: string) => reported.push(where) };
  const runner = new EffectRunner(ctx as never, {} as never, {} as never);
  const ran: string[] = [];
  const effects: Effect[] = [
    { type: "toast", message: "a", variant: "info" },
    { type: "audit", event: "session_aborted", data: {} },
    { type: "toast", message: "b", variant: "info" },
  ];
  await runner.run("ses_x", effects);
  expect(reported).toEqual(["effect:toast", "effect:audit", "effect:toast"]);
  const handlers = {
    toast: (_id: string, e: { message: string }) => void ran.push(`toast ${e.message}`),
    audit: () => {
      throw new Error("disk full");
    },
  } as unknown as EffectHandlers;
  runner.handle(handlers);
  expect(() => runner.handle(handlers)).toThrow();
  reported.length = 0;
  await runner.run("ses_x", effects);
  expect(ran).toEqual(["toast a", "toast b"]);
  expect(reported).toEqual(["effect:audit"]);
});
