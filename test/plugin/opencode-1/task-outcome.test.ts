import { expect, test } from "vitest";
import { taskOutcome } from "../../../plugin/opencode-1/tool-calls.ts";
import { TASK_RESULTS } from "../fixtures/task-results.ts";

// The formats come from the real binary (test/e2e/task-result-format.test.ts keeps them current).
test("OpenCode's real task results: a completed task is completed, a cancelled one aborted, a failed one failed", () => {
  expect(taskOutcome(TASK_RESULTS.completed)).toBe("completed");
  expect(taskOutcome(TASK_RESULTS.aborted)).toBe("aborted");
  expect(taskOutcome(TASK_RESULTS.failed)).toBe("failed");
});

test("the states the parser also knows: error/failed are failed, aborted is aborted, only at the start", () => {
  const as = (state: string) => TASK_RESULTS.completed.replace('state="completed"', `state="${state}"`);
  expect(taskOutcome(as("error"))).toBe("failed");
  expect(taskOutcome(as("failed"))).toBe("failed");
  expect(taskOutcome(as("aborted"))).toBe("aborted");
  expect(taskOutcome(`note\n${TASK_RESULTS.aborted}`)).toBe("completed");
});
