/**
 * `npx tsx scripts/bench/pairs.ts --variants empty,governance --pairs 6 [--calls 100]`: two variants run AT THE SAME
 * TIME, one process each, pair after pair; each pair's CPU ratio (tree CPU of B / A) is printed and their median.
 * Running the two side by side exposes both to the same moment of the machine (its speed drifts by tens of per cent
 * between minutes on a shared VM), so a pair's ratio is far less noisy than ratios of runs minutes apart. It is a tool
 * for choosing a lever; the acceptance figure is the interleaved bench's (scripts/bench.ts).
 */
import { ensureOpencodeBinary, ensureWarmDeps } from "../../test/harness/warm-cache.ts";
import { startScriptedModel } from "../../test/harness/index.ts";
import { benchRespond, hostRun, primeTranspilerCache, setBaselineBundle, type Variant } from "./host.ts";
import { stats } from "./stats.ts";
import { option } from "./cli-args.ts";

const [A, B] = (option("--variants") ?? "empty,governance").split(",") as [Variant, Variant];
const PAIRS = Number(option("--pairs") ?? "6");
const CALLS = Number(option("--calls") ?? "100");
const baseline = option("--baseline");
if (baseline) setBaselineBundle(baseline);

async function main(): Promise<void> {
  ensureOpencodeBinary();
  ensureWarmDeps();
  primeTranspilerCache();
  const model = await startScriptedModel(benchRespond);
  const cpu: number[] = [];
  const wall: number[] = [];
  /** Peak RSS (VmHWM) of B / A per pair: two processes side by side do not share a heap, so memory compares too. */
  const peak: number[] = [];
  /** Per thread name, B − A per pair (ms): where the difference is spent (main thread, GC helper, JIT, children). */
  const byThread = new Map<string, number[]>();
  try {
    for (let i = 0; i < PAIRS; i++) {
      // Alternate which one starts first, so neither is always a few milliseconds ahead.
      const [ra, rb] =
        i % 2 === 0
          ? await Promise.all([hostRun(model, A, "A", CALLS), hostRun(model, B, "A", CALLS)])
          : await Promise.all([hostRun(model, B, "A", CALLS), hostRun(model, A, "A", CALLS)]).then(([b, a]) => [a, b] as const);
      const ok = ra.clean && rb.clean;
      if (ok) {
        cpu.push(rb.cpuMs / ra.cpuMs);
        wall.push(rb.runMs / ra.runMs);
        peak.push(rb.peakRssMiB / ra.peakRssMiB);
        for (const name of new Set([...ra.threads.keys(), ...rb.threads.keys()]))
          byThread.set(name, [...(byThread.get(name) ?? []), (rb.threads.get(name) ?? 0) - (ra.threads.get(name) ?? 0)]);
      }
      console.log(
        `pair ${i + 1}: ${A} cpu ${ra.cpuMs.toFixed(0)} ms run ${ra.runMs} ms | ${B} cpu ${rb.cpuMs.toFixed(0)} ms run ${rb.runMs} ms | cpu ratio ${(rb.cpuMs / ra.cpuMs).toFixed(3)}${ok ? "" : `  NOT CLEAN: ${ra.problem} ${rb.problem}`}`,
      );
    }
  } finally {
    await model.close();
  }
  const range = (d: number[]) => {
    const s = stats(d);
    return `${s.median.toFixed(3)} (${s.min.toFixed(3)}–${s.max.toFixed(3)})`;
  };
  console.log(
    `\n${B} / ${A}, ${cpu.length} clean pairs: CPU median ${range(cpu)}; wall median ${stats(wall).median.toFixed(3)}; peak RSS median ${range(peak)}`,
  );
  console.log(`${B} − ${A} by thread (ms, median of pairs):`);
  const median = (d: number[]) => stats(d).median;
  for (const [name, d] of [...byThread].sort((x, y) => Math.abs(median(y[1])) - Math.abs(median(x[1]))))
    if (Math.abs(median(d)) >= 5) console.log(`  ${name.padEnd(18)} ${median(d).toFixed(0).padStart(7)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
