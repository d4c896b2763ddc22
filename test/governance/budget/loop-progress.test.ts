import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LoopConfig } from "../../../governance/config/budget-config.ts";
import { type LoopState, type LoopVerdict, loopCallKey, NEW_LOOP_STATE, observeCall } from "../../../governance/budget/loop-guard.ts";
import { compareDecimal, MAX_SLOTS, readOutput } from "../../../governance/budget/loop-progress.ts";

/**
 * The loop guard tells progress from noise. Each case both ways, through the whole guard (`observeCall`),
 * with calls that do not wait (quick, a model step apart, no sleep or status word): judged at `repeat` (3).
 */
const cfg = LoopConfig.parse({});

/** The verdicts for one quick bash command whose outputs are `outputs`, in turn. */
function verdicts(outputs: readonly string[], command = "./check.sh"): string[] {
  return calls(outputs.map((out) => ({ command, out })));
}
function calls(list: readonly { command: string; out: string }[]): string[] {
  let s: LoopState = NEW_LOOP_STATE;
  let now = 1_000_000;
  return list.map(({ command, out }) => {
    now += 1_000;
    const key = loopCallKey("bash", { command, description: "step" }, now, "/p");
    now += 50;
    const r = observeCall(s, key, { output: out, endedAt: now }, cfg);
    s = r.next;
    return show(r.verdict);
  });
}
const show = (v: LoopVerdict) => (v.kind === "none" ? "-" : `${v.kind}:${v.shape}`);
const quiet = (n: number) => Array.from({ length: n }, () => "-");
/** Cumulative sums: a byte count growing by these amounts. */
function grown(start: bigint, steps: readonly bigint[]): bigint[] {
  const out = [start];
  for (const d of steps) out.push((out.at(-1) as bigint) + d);
  return out;
}
const NOTICE_AT_3 = ["-", "-", "notice:repeat", "-", "stop:repeat"];

describe("progress: a number that moves one way in the same place is not a repeat", () => {
  it.each<[string, string[]]>([
    ["a growing build log (`wc -c < build.log`)", grown(412n, [97n, 1530n, 64n, 388n, 2210n, 150n, 733n, 12n, 5n, 900n, 41n]).map(String)],
    [
      "the clock in nanoseconds (`date +%s%N`, 19 digits: beyond a double)",
      Array.from({ length: 12 }, (_, i) => `${1795186310000000000n + BigInt(i) * 731517203n}`),
    ],
    ["epoch seconds a second apart (above 10⁹: a clock, not a call counter)", Array.from({ length: 12 }, (_, i) => `${1795186300 + i}`)],
    ["an ISO timestamp beside an unchanged status", Array.from({ length: 12 }, (_, i) => `2026-11-26T10:${String(i * 3).padStart(2, "0")}:07Z pending`)],
    ["`date`'s own format, crossing a minute", ["35:50", "35:56", "36:02", "36:09", "36:15", "36:21"].map((t) => `Sat Nov 28 07:${t} UTC 2026`)],
    ["fractions of a second of different lengths", ["12:00:00.5", "12:00:00.75", "12:00:00.8", "12:00:01", "12:00:01.25", "12:00:01.3"]],
    ["a percentage, including a step of one", ["build 8%", "build 9%", "build 23%", "build 24%", "build 51%", "build 70%", "build 99%"]],
    [
      "a count that falls, by one each call (a countdown ends: progress)",
      ["7 files left", "6 files left", "5 files left", "4 files left", "3 files left", "2 files left", "1 files left"],
    ],
    ["bytes left to download", ["remaining 80.5 MB", "remaining 61 MB", "remaining 44.25 MB", "remaining 20 MB", "remaining 3 MB"]],
    [
      "several numbers, one grows (pid and duration jump, the byte count grows)",
      [
        "pid 812 0.41s 1024 bytes",
        "pid 77 0.27s 1536 bytes",
        "pid 903 0.35s 2048 bytes",
        "pid 15 0.19s 4096 bytes",
        "pid 640 0.44s 4097 bytes",
        "pid 3 0.23s 8000 bytes",
      ],
    ],
    ["a clock past midnight (one turn back is a restart)", ["23:59:40", "23:59:52", "00:00:03", "00:00:15", "00:00:27", "00:00:39"]],
    ["a log rotated mid-poll, then growing again", ["48000", "51200", "120", "2048", "4096", "9000", "12000"]],
  ])("%s", (_name, outputs) => {
    expect(verdicts(outputs)).toEqual(quiet(outputs.length));
  });

  it("a number that grows then stops: noticed when the same value came three times, progress again when it moves", () => {
    expect(verdicts(["100", "250", "300", "300", "300", "300", "300", "900"])).toEqual(["-", "-", "-", "-", "notice:repeat", "-", "stop:repeat", "-"]);
    // Grows, holds twice, grows: never three of a kind.
    expect(verdicts(["100", "250", "250", "300", "300", "420", "420", "500"])).toEqual(quiet(8));
  });
});

describe("noise: the same result with numbers that do not move one way is a repeat", () => {
  it.each<[string, string[], string[]]>([
    [
      "a call counter: +1 at every call ('attempt 3: not ready', issue 28's cosmetic loop)",
      Array.from({ length: 5 }, (_, i) => `attempt ${i + 1}: not ready`),
      NOTICE_AT_3,
    ],
    ["a call counter with a clock beside it that does not move", Array.from({ length: 5 }, (_, i) => `10:00 attempt ${i + 7}`), NOTICE_AT_3],
    ["the same byte count", Array(5).fill("4096"), NOTICE_AT_3],
    ["the same 19-digit clock reading", Array(5).fill("1795186310731517203"), NOTICE_AT_3],
    [
      "a duration jumping up and down beside an unchanged status",
      [41, 27, 35, 19, 44, 23, 38, 31, 29, 40].map((d) => `not ready (took 0.${d}s)`),
      ["-", "-", "-", "-", "-", "notice:repeat", "-", "stop:repeat", "-", "-"],
    ],
    [
      "random ids and a request number",
      [
        "req 8812 id 3f9a2b1c7d: pending",
        "req 411 id 9e8d7c6b5a: pending",
        "req 9301 id 1a2b3c4d5e: pending",
        "req 17 id 5e4d3c2b1a: pending",
        "req 4410 id a1b2c3d4e5: pending",
        "req 3 id e5d4c3b2a1: pending",
        "req 700 id 0a0b0c0d0e: pending",
      ],
      ["-", "-", "-", "-", "-", "notice:repeat", "-"],
    ],
    ["a number of more than 32 digits is an id, not a measure", Array.from({ length: 5 }, (_, i) => `token ${"9".repeat(33)}${i}`), NOTICE_AT_3],
    [
      "a growing number before the last 16 is not watched",
      Array.from({ length: 5 }, (_, i) => `${100 + i * 37} ${Array(MAX_SLOTS).fill("5").join(" ")}`),
      NOTICE_AT_3,
    ],
  ])("%s", (_name, outputs, expected) => {
    expect(verdicts(outputs)).toEqual(expected);
  });

  it("random durations: how late noise is caught (the figures in docs/budgets.md; seeded, 500 runs of 20 calls)", () => {
    let seed = 39;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const stopAt = (slots: number) =>
      Array.from({ length: 500 }, () => {
        const outputs = Array.from(
          { length: 30 },
          () => `Tests 3 failed | 88 passed\n${Array.from({ length: slots }, () => `${(random() * 5).toFixed(2)}s`).join(" ")}`,
        );
        return verdicts(outputs, "npx vitest run").indexOf("stop:repeat") + 1;
      }).sort((a, b) => a - b);
    const one = stopAt(1);
    const six = stopAt(6);
    expect(one[0]).toBeGreaterThan(0); // every run stopped
    expect(six[0]).toBeGreaterThan(0);
    expect([one[250], one[450], one.at(-1), six[250]]).toEqual([8, 10, 13, 10]);
  });

  it("a number that grows, drops and grows is a restart; a second turn makes it noise", () => {
    // 5 → 9 grows, 2 drops (turn 1), 8 grows (progress), 1 drops (turn 2): from here on it is noise whatever it
    // does, so 8, 1 and 30 are three of a kind.
    expect(verdicts(["5", "9", "2", "8", "1", "30", "60", "90", "120"])).toEqual(["-", "-", "-", "-", "-", "notice:repeat", "-", "stop:repeat", "-"]);
  });
});

describe("cycles and polls stay coherent", () => {
  const cycle = (a: (i: number) => string, n = 10) =>
    calls(Array.from({ length: n }, (_, i) => (i % 2 ? { command: "cat b", out: "b" } : { command: "wc -c < log", out: a(i / 2) })));
  it("A-B where A's byte count grows is not a ping-pong; where it jitters or holds, it is", () => {
    expect(cycle((i) => `${1000 + i * 517}`)).toEqual(quiet(10));
    expect(cycle(() => "1000")).toEqual(["-", "-", "-", "notice:ping-pong", "-", "stop:ping-pong", "-", "-", "-", "-"]);
    expect(cycle((i) => `${[41, 27, 35, 19, 44, 23, 38, 31, 29, 40][i]}`, 16)).toContain("stop:ping-pong");
  });
  it("a poll that waits is still judged on its exact output: a moving number is a change, ten identical results a loop", () => {
    const poll = (out: (i: number) => string) => calls(Array.from({ length: 12 }, (_, i) => ({ command: "sleep 1; wc -c < log", out: out(i) })));
    expect(poll((i) => `${1000 + i * 3}`)).toEqual(quiet(12));
    expect(poll(() => "1000")).toEqual([...quiet(9), "notice:poll", "-", "stop:poll"]);
  });
});

describe("readings", () => {
  it("a timestamp is one reading; its parts count in the shape, so a date and a date with a time are not one slot", () => {
    expect(readOutput("at 2026-11-26T10:00:07.250Z: 3 left").readings).toEqual([
      { time: true, value: "20261126100007.25" },
      { time: false, value: "3" },
    ]);
    expect(readOutput("2026-11-26").shape).not.toBe(readOutput("2026-11-26 10:00").shape);
    expect(readOutput(`${"1 ".repeat(40)}`).readings).toHaveLength(MAX_SLOTS);
  });
  it("compares decimals exactly at any length", () => {
    expect(compareDecimal("1795186310731517204", "1795186310731517203")).toBe(1);
    expect(compareDecimal("9.5", "10")).toBe(-1);
    expect(compareDecimal("0.75", "0.8")).toBe(-1);
    expect(compareDecimal("2.50", "2.5")).toBe(0);
  });
});

/** Text around the numbers: letters, spaces and punctuation, no digits (so it forms no number, time or id). */
const words = fc.string({ unit: fc.constantFrom(..."abcdefgh xyz:-_/.()"), maxLength: 12 }).map((w) => ` ${w.trim()} `);
const render = (texts: readonly string[], values: readonly (bigint | number)[]) => texts.map((t, i) => (i < values.length ? `${t}${values[i]}` : t)).join("|");

describe("properties", () => {
  it("strictly growing numbers in the same slot never count as a repeat (any size; steps of at least 2), whatever jitters beside them", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 25n }),
        fc.array(fc.bigInt({ min: 2n, max: 10n ** 12n }), { minLength: 12, maxLength: 12 }),
        fc.array(fc.nat({ max: 999 }), { minLength: 12, maxLength: 12 }),
        fc.array(words, { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        (start, steps, jitter, texts, down) => {
          const grow = grown(start, steps);
          const values = down ? grow.reverse() : grow;
          const outputs = values.slice(0, 12).map((v, i) => render(texts, [jitter[i] as number, v]));
          return verdicts(outputs).every((v) => v === "-");
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a cycle of 2 to 4 calls in which one call's number grows strictly is never a cycle, whatever the others return", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 4 }),
        fc.array(fc.bigInt({ min: 2n, max: 10n ** 9n }), { minLength: 16, maxLength: 16 }),
        fc.boolean(),
        (period, steps, same) => {
          const counts = grown(1000n, steps);
          const list = Array.from({ length: 16 }, (_, i) =>
            i % period === 0
              ? { command: "wc -c < build.log", out: `${counts[i / period]}` }
              : { command: `cat part-${i % period}`, out: same ? "unchanged" : `${i % 7}` },
          );
          return calls(list).every((v) => v === "-");
        },
      ),
      { numRuns: 200 },
    );
  });

  it("numbers that turned back twice in their first five calls are noise: the same text is noticed by the 6th call and stopped by the 8th", () => {
    const zigzag = fc
      .tuple(
        fc.nat({ max: 10_000 }),
        fc.array(fc.integer({ min: 1, max: 5_000 }), { minLength: 4, maxLength: 4 }),
        fc.boolean(),
        fc.array(fc.nat({ max: 10 ** 9 }), { minLength: 7, maxLength: 7 }),
      )
      .map(([base, d, up, rest]) => {
        const s = up ? 1 : -1;
        // base, +a, -b, +c, -d (or the mirror): two turns; then anything at all, even growth.
        const v = [base + 20_000, base + 20_000 + s * (d[0] as number)];
        for (let k = 1; k < 4; k++) v.push((v.at(-1) as number) + (k % 2 ? -s : s) * ((d[k] as number) + (d[k - 1] as number)));
        return [...v, ...rest];
      });
    fc.assert(
      fc.property(fc.array(zigzag, { minLength: 1, maxLength: 3 }), fc.array(words, { minLength: 4, maxLength: 4 }), (slots, texts) => {
        const outputs = Array.from({ length: 12 }, (_, i) =>
          render(
            texts,
            slots.map((s) => s[i] as number),
          ),
        );
        const seen = verdicts(outputs);
        const notice = seen.indexOf("notice:repeat");
        const stop = seen.indexOf("stop:repeat");
        return notice >= 0 && notice <= 5 && stop >= 0 && stop <= 7;
      }),
      { numRuns: 300 },
    );
  });
});
