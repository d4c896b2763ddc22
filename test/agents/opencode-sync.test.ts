import fs from "fs-extra";
import path from "node:path";
import { expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { ROOT, expectedOpencodeFiles } from "../../scripts/sync-opencode.ts";

test(".opencode/ is generated from agents/ and has not drifted (npm run sync-agents)", () => {
  for (const [rel, content] of expectedOpencodeFiles()) {
    const file = path.join(ROOT, rel);
    expect(fs.existsSync(file), `${rel} missing: run npm run sync-agents`).toBe(true);
    expect(fs.readFileSync(file, "utf8"), `${rel} drifted from its source: run npm run sync-agents`).toBe(content);
  }
  const extra = fs.readdirSync(path.join(ROOT, ".opencode", "agent")).filter((f) => !expectedOpencodeFiles().has(path.join(".opencode", "agent", f)));
  expect(extra, "agent files in .opencode/ that agents/ does not have").toEqual([]);
});

test("every agent file has valid frontmatter; leaf agents deny task", () => {
  const dir = path.join(ROOT, "agents");
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".md"))) {
    const text = fs.readFileSync(path.join(dir, f), "utf8");
    const m = /^---\n([\s\S]*?)\n---\n([\s\S]+)$/.exec(text);
    expect(m, `${f}: frontmatter`).not.toBeNull();
    const fm = parseYaml(m![1]!) as { description: string; mode: string; permission: { task: Record<string, string> } };
    expect(typeof fm.description).toBe("string");
    expect(["primary", "subagent", "all"]).toContain(fm.mode);
    expect(fm.permission.task["*"], `${f}: task must default to deny (allow-list)`).toBe("deny");
    if (/builder|validator/.test(f)) expect(Object.values(fm.permission.task).every((v) => v === "deny"), `${f} is a leaf`).toBe(true);
  }
});

test("each agent's OpenCode task permissions match the plugin's default allow-list for it", async () => {
  const { DEFAULT_CONFIG } = await import("../../governance/config/config.ts");
  const dir = path.join(ROOT, "agents");
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".md"))) {
    const name = f.replace(/\.md$/, "");
    const fm = parseYaml(/^---\n([\s\S]*?)\n---/.exec(fs.readFileSync(path.join(dir, f), "utf8"))![1]!) as { mode: string; permission: { task: Record<string, string> } };
    const allowed = Object.entries(fm.permission.task).filter(([, v]) => v === "allow").map(([k]) => k).sort();
    const policy = DEFAULT_CONFIG.agents[name];
    expect(policy, `${name} has no default policy in governance/config/config.ts`).toBeDefined();
    expect(allowed, `${name}: agents/${f} task allow-list differs from the governance default`).toEqual([...policy!.mayDelegateTo].sort());
    expect(fm.mode === "primary", `${name}: mode matches role`).toBe(policy!.role === "primary");
  }
});
