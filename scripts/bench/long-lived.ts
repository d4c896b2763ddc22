import { auditEvents, createTestProject, type ScriptedModel, serveOpencode } from "../../test/harness/index.ts";
import { findProcessByCwd, memoryMiB } from "./proc.ts";

export type LongLivedSample = { sessions: number; rssMiB: number; plugin?: { heapUsedMiB: number; stats: Record<string, number> } };

/**
 * (5) Long-lived: one `opencode serve` hosting `count` sessions one after another (each one short turn), as an editor
 * or the web UI would over days; RSS sampled every `every` sessions, and with governance the plugin's own map sizes
 * and heap from its periodic sweep (every 60 s; OPENCODE_GOVERNANCE_STATS=1 writes them to the audit log). Issue 21
 * item 7: flat once sessions end.
 */
export async function longLived(
  model: ScriptedModel,
  plugin: "local" | "none",
  count: number,
  every: number,
  governanceYaml?: string,
): Promise<LongLivedSample[]> {
  const project = createTestProject({ modelUrl: model.url, plugin, ...(governanceYaml ? { governanceYaml } : {}) });
  const serve = await serveOpencode(project, { env: { OPENCODE_GOVERNANCE_STATS: "1" } });
  const samples: LongLivedSample[] = [];
  try {
    const pid = findProcessByCwd(project.dir);
    for (let i = 1; i <= count; i++) {
      const s = await serve.http.createSession();
      await serve.http.prompt(s.id, "BENCH-LONG one short turn");
      if (i % every !== 0) continue;
      const sample: LongLivedSample = { sessions: i, rssMiB: pid ? Math.round(memoryMiB(pid).rss) : Number.NaN };
      const last = auditEvents(project.governanceDir)
        .filter((e) => e.type === "maintenance_swept" && e.stats)
        .at(-1);
      if (last) sample.plugin = { heapUsedMiB: last.heapUsedMiB as number, stats: last.stats as Record<string, number> };
      samples.push(sample);
    }
  } finally {
    await serve.stop();
    project.cleanup();
  }
  return samples;
}
