/** Small statistics for the bench: nearest-rank percentiles (each one a value that was measured). */
export type Stats = { n: number; median: number; p99: number; min: number; max: number };

export function stats(samples: readonly number[]): Stats {
  const s = [...samples].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, median: Number.NaN, p99: Number.NaN, min: Number.NaN, max: Number.NaN };
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { n: s.length, median, p99: at(99), min: s[0]!, max: s.at(-1)! };
}

export const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : "–");

/** "1.02 (0.95–1.10)": median ratio and its range over rounds. */
export function ratioText(ratios: readonly number[]): string {
  const st = stats(ratios);
  return `${fmt(st.median, 2)} (${fmt(st.min, 2)}–${fmt(st.max, 2)})`;
}
