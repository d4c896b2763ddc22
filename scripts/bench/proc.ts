import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * What the opencode process costs, read from /proc (Linux). `opencode serve` is started detached by the harness,
 * which does not expose its pid: the process is found by its working directory (each run has its own project).
 */
export function findProcessByCwd(cwd: string, name = "opencode"): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) !== cwd) continue;
      if (!readFileSync(`/proc/${entry}/comm`, "utf8").includes(name.slice(0, 15))) continue;
      return Number(entry);
    } catch {
      // The process went away or is not ours to read.
    }
  }
  return undefined;
}

const TICKS_PER_SECOND = 100;

/**
 * One `/proc/.../stat` line: the name (`comm`, in parentheses, may hold spaces) and the CPU fields after it, in ms —
 * utime + stime (fields 14–15) and the reaped children's cutime + cstime (16–17).
 */
function readStat(file: string): { comm: string; ownMs: number; sysMs: number; childrenMs: number } {
  const stat = readFileSync(file, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ms = (a: number, b: number) => ((Number(f[a]) + Number(f[b])) * 1000) / TICKS_PER_SECOND;
  const sysMs = (Number(f[12]) * 1000) / TICKS_PER_SECOND;
  return { comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ownMs: ms(11, 12), sysMs, childrenMs: ms(13, 14) };
}

/**
 * CPU of the process and its reaped children, plus its live children's own: the whole opencode tree, including the
 * git processes of its snapshots.
 */
export function treeCpuMs(pid: number): number {
  const total = (p: number): number => {
    try {
      const { ownMs, childrenMs } = readStat(`/proc/${p}/stat`);
      return ownMs + childrenMs;
    } catch {
      return 0;
    }
  };
  return [pid, ...childrenOf(pid)].reduce((n, p) => n + total(p), 0);
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (list) for (const c of list.split(" ")) out.push(Number(c), ...childrenOf(Number(c)));
    }
  } catch {
    // gone
  }
  return out;
}

/**
 * CPU per thread name of one process (utime + stime of /proc/<pid>/task/<tid>/stat, summed by `comm`: the main
 * thread is named after the process), plus its reaped children as "(children)".
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const { comm, ownMs, sysMs } = readStat(`/proc/${pid}/task/${tid}/stat`);
        const name = Number(tid) === pid ? "(main)" : comm.replace(/\d+$/, "");
        out.set(name, (out.get(name) ?? 0) + ownMs);
        if (name === "(main)") out.set("(main, in the kernel)", sysMs);
      } catch {
        // the thread ended
      }
    }
    out.set("(children)", readStat(`/proc/${pid}/stat`).childrenMs);
  } catch {
    // gone
  }
  return out;
}

/** VmRSS and VmHWM (peak) of one process, in MiB. */
export function memoryMiB(pid: number): { rss: number; hwm: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
  } catch {
    return { rss: Number.NaN, hwm: Number.NaN };
  }
}
