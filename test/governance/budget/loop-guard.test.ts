import { describe, expect, it } from "vitest";
import { LoopConfig } from "../../../governance/config/budget-config.ts";
import { type LoopState, type LoopVerdict, loopCallKey, NEW_LOOP_STATE, observeCall } from "../../../governance/budget/loop-guard.ts";
import { normaliseArgs } from "../../../governance/budget/loop-normalise.ts";
import { readOutput } from "../../../governance/budget/loop-progress.ts";

const cfg = LoopConfig.parse({});
const CWD = "/home/u/project";

/** One call: tool, arguments, output; `took` ms inside the call, `after` ms since the previous result (default 1 s: a model step). */
type Call = { tool?: string; args: Record<string, unknown>; out: string; took?: number; after?: number };
const bash = (command: string, out: string, extra: Partial<Call> = {}): Call => ({ tool: "bash", args: { command, description: "step" }, out, ...extra });
const read = (filePath: string, out = "hello\n"): Call => ({ tool: "read", args: { filePath }, out });

function run(calls: Call[], config = cfg): string[] {
  let s: LoopState = NEW_LOOP_STATE;
  let now = 1_000_000;
  return calls.map((c) => {
    now += c.after ?? 1_000;
    const key = loopCallKey(c.tool ?? "bash", c.args, now, CWD);
    now += c.took ?? 50;
    const r = observeCall(s, key, { output: c.out, endedAt: now }, config);
    s = r.next;
    return show(r.verdict);
  });
}
const show = (v: LoopVerdict) => (v.kind === "none" ? "-" : `${v.kind}:${v.shape}`);
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

describe("loop guard: what is a loop (issue 28: each cosmetic variant is caught)", () => {
  it.each<[string, Call[], string[]]>([
    [
      "same call, same result: notice at the 3rd, stop 2 calls later, once",
      times(7, () => bash("cat notes.txt", "x")),
      ["-", "-", "notice:repeat", "-", "stop:repeat", "-", "-"],
    ],
    [
      "a reworded `description` is the same call",
      times(5, (i) => ({ tool: "bash", args: { command: "cat notes.txt", description: `read the notes, try ${i}` }, out: "x" })),
      ["-", "-", "notice:repeat", "-", "stop:repeat"],
    ],
    [
      "./notes.txt, notes.txt and the absolute path are one file",
      [read("./notes.txt"), read("notes.txt"), read(`${CWD}/notes.txt`), read(".//notes.txt"), read("notes.txt")],
      ["-", "-", "notice:repeat", "-", "stop:repeat"],
    ],
    [
      "an A-B-C cycle with unchanged results: notice after 2 cycles, stop 2 calls later",
      times(8, (i) => bash(["ls", "cat a", "cat b"][i % 3] as string, ["l", "a", "b"][i % 3] as string)),
      ["-", "-", "-", "-", "-", "notice:cycle", "-", "stop:cycle"],
    ],
    [
      "A-B-A-B with unchanged results: ping-pong",
      times(6, (i) => bash(i % 2 ? "cat b" : "cat a", i % 2 ? "b" : "a")),
      ["-", "-", "-", "notice:ping-pong", "-", "stop:ping-pong"],
    ],
    [
      "a counter in the output is not progress",
      times(5, (i) => bash("./check.sh", `attempt ${i + 1}: not ready`)),
      ["-", "-", "notice:repeat", "-", "stop:repeat"],
    ],
    [
      "a timestamp that does not move (a cached 'updated at') beside an unchanged status",
      times(5, () => bash("cat state", "2026-11-26T10:00:00Z pending")),
      ["-", "-", "notice:repeat", "-", "stop:repeat"],
    ],
    [
      "a poll that waits and never changes is a loop too, but only after pollRepeat (10) polls",
      times(13, () => bash("sleep 5; cat build.log | tail -1", "build running")),
      [...times(9, () => "-"), "notice:poll", "-", "stop:poll", "-"],
    ],
  ])("%s", (_name, calls, expected) => {
    expect(run(calls)).toEqual(expected);
  });
});

describe("loop guard: what is not a loop (both ways)", () => {
  it.each<[string, Call[]]>([
    ["a poll that sleeps and prints the same line (the build is still running)", times(9, () => bash("sleep 2; cat status.txt", "build running"))],
    ["a poll whose call itself waits (took ≥ pollWait)", times(9, () => bash("./wait-for-build", "build running", { took: 2_500 }))],
    ["a poll after a long gap (≥ pollGap since the last result)", times(9, () => bash("cat status.txt", "build running", { after: 31_000 }))],
    ["a status call", times(9, () => bash("git status --short", " M notes.txt"))],
    ["a waiting poll whose number moves is progress", times(12, (i) => bash("sleep 1; cat progress", `build ${i * 8}%`))],
    ["different files are different calls", times(6, (i) => read(`notes-${"abcdef"[i]}.txt`))],
    ["a different command each time", times(6, (i) => bash(["ls", "pwd", "whoami", "id", "uname", "date"][i] as string, "x"))],
    ["A-B-C whose results change (not only in numbers)", times(9, (i) => bash(["ls", "cat a", "cat b"][i % 3] as string, `${"xyzuvwrst"[i]}`))],
  ])("%s", (_name, calls) => {
    expect(run(calls).every((v) => v === "-")).toBe(true);
  });

  it("a different call after the notice resets the guard", () => {
    const a = bash("cat a", "a");
    expect(run([a, a, a, bash("ls", "l"), a, a, a])).toEqual(["-", "-", "notice:repeat", "-", "-", "-", "notice:repeat"]);
  });
  it("off when disabled; the thresholds are configurable", () => {
    const a = times(5, () => bash("cat a", "a"));
    expect(run(a, { ...cfg, enabled: false }).every((v) => v === "-")).toBe(true);
    expect(run(a, { ...cfg, repeat: 5 })).toEqual(["-", "-", "-", "-", "notice:repeat"]);
    expect(
      run(
        times(4, () => bash("sleep 1; cat s", "same")),
        { ...cfg, pollRepeat: 3 },
      ),
    ).toEqual(["-", "-", "notice:poll", "-"]);
  });
});

describe("normalisation", () => {
  it("drops `description`, sorts keys, strips ./ and the project folder", () => {
    expect(normaliseArgs({ description: "x", filePath: `${CWD}/src/./a.ts` }, CWD)).toBe(normaliseArgs({ filePath: "./src/a.ts" }, CWD));
    expect(normaliseArgs({ command: "cat ./a  &&  cat ./b" })).toBe(normaliseArgs({ command: "cat a && cat b" }));
    expect(normaliseArgs({ command: "cat ../a" })).not.toBe(normaliseArgs({ command: "cat a" }));
  });
  it("masks numbers, timestamps and ids in outputs, keeps the words", () => {
    expect(readOutput("12:01:02 run 42 id 3f9a2b1c7d").shape).toBe(readOutput("12:05:09 run 43 id 9e8d7c6b5a").shape);
    expect(readOutput("build running").shape).not.toBe(readOutput("build failed").shape);
  });
});
