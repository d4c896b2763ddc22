import { describe, expect, it } from "vitest";
import { contain, GovernanceBlock, type HookErrorSink } from "../../../plugin/runtime/contain.ts";

/** A sink that records what it was told, as the governor's audit-log sink does. */
function recordingSink(): { sink: HookErrorSink; calls: { hook: string; error: unknown }[] } {
  const calls: { hook: string; error: unknown }[] = [];
  return { sink: (hook, error) => void calls.push({ hook, error }), calls };
}

/** A hook that fails with `error` (a rejected promise, as an async hook's throw). */
const failing = (error: unknown) => async () => {
  throw error;
};

describe("contain: a governance bug never breaks the user's session", () => {
  it("passes arguments through and lets the hook mutate OpenCode's output", async () => {
    const { sink, calls } = recordingSink();
    const hook = contain(
      "tool.execute.after",
      async (_input: { tool: string }, output: { output: string }) => {
        output.output = `governed: ${output.output}`;
      },
      sink,
    );
    const output = { output: "ls" };
    await hook({ tool: "bash" }, output);
    expect(output.output).toBe("governed: ls");
    expect(calls).toEqual([]);
  });

  it("an unexpected error is swallowed and reported to the sink with the hook's name", async () => {
    const { sink, calls } = recordingSink();
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
    const hook = contain("event", failing(bug), sink);
    await expect(hook()).resolves.toBeUndefined();
    expect(calls).toEqual([{ hook: "event", error: bug }]);
  });

  it("a non-Error throw and a synchronous throw are contained too", async () => {
    const { sink, calls } = recordingSink();
    await expect(contain("a", async () => Promise.reject("disk full"), sink)()).resolves.toBeUndefined();
    const sync = contain(
      "b",
      (() => {
        throw new Error("sync");
      }) as () => Promise<void>,
      sink,
    );
    await expect(sync()).resolves.toBeUndefined();
    expect(calls.map((c) => c.hook)).toEqual(["a", "b"]);
    expect(calls[0]!.error).toBe("disk full");
  });

  it("a GovernanceBlock is re-thrown unchanged (OpenCode shows its message as the tool result) and not reported", async () => {
    const { sink, calls } = recordingSink();
    const block = new GovernanceBlock("❌ SESSION TERMINATED: no further tool calls");
    const hook = contain("tool.execute.before", failing(block), sink);
    await expect(hook()).rejects.toBe(block);
    await expect(hook()).rejects.toThrow("SESSION TERMINATED");
    expect(block.name).toBe("GovernanceBlock");
    expect(calls).toEqual([]);
  });

  it("a subclass of GovernanceBlock is still a deliberate block", async () => {
    class DepthBlock extends GovernanceBlock {}
    const { sink } = recordingSink();
    await expect(contain("x", async () => Promise.reject(new DepthBlock("depth")), sink)()).rejects.toBeInstanceOf(DepthBlock);
  });

  it("an error that merely looks like a block (same name) is contained: only the real class may reach OpenCode", async () => {
    const { sink, calls } = recordingSink();
    const lookalike = Object.assign(new Error("forged"), { name: "GovernanceBlock" });
    await expect(contain("x", async () => Promise.reject(lookalike), sink)()).resolves.toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it("a sink that throws does not escape either", async () => {
    const hook = contain("event", failing(new Error("bug")), () => {
      throw new Error("audit log unwritable");
    });
    await expect(hook()).resolves.toBeUndefined();
  });
});
