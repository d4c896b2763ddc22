import fs from "fs-extra";
import path from "node:path";
import { expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { HOST_LINES } from "../../governance/host/host-lines.ts";
import { GENERATED_DIRS, ROOT, expectedOpencodeFiles } from "../../scripts/sync-opencode.ts";

test(".opencode/ is generated from agents/ and commands/ and has not drifted (npm run sync-agents)", () => {
  for (const [rel, content] of expectedOpencodeFiles()) {
    const file = path.join(ROOT, rel);
    expect(fs.existsSync(file), `${rel} missing: run npm run sync-agents`).toBe(true);
    expect(fs.readFileSync(file, "utf8"), `${rel} drifted from its source: run npm run sync-agents`).toBe(content);
  }
  for (const sub of GENERATED_DIRS) {
    const extra = fs.readdirSync(path.join(ROOT, ".opencode", sub)).filter((f) => !expectedOpencodeFiles().has(path.join(".opencode", sub, f)));
    expect(extra, `files in .opencode/${sub}/ that have no source: run npm run sync-agents`).toEqual([]);
  }
});

test("every command file has a description and runs the governance CLI by shell interpolation", () => {
  const dir = path.join(ROOT, "commands");
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".md"));
  expect(files.sort()).toEqual(["governance-inject.md", "governance-stop.md", "governance.md"]);
  for (const f of files) {
    const text = fs.readFileSync(path.join(dir, f), "utf8");
    const m = /^---\n([\s\S]*?)\n---\n([\s\S]+)$/.exec(text);
    expect(m, `${f}: frontmatter`).not.toBeNull();
    const fm = parseYaml(m![1]!) as { description: string };
    expect(fm.description, `${f}: description shown in the TUI's command list`).toMatch(/^Governance — /);
    // OpenCode 1.18 runs !`…` when the command is used (ConfigMarkdown.SHELL_REGEX) and puts the output in the prompt.
    const shell = [...m![2]!.matchAll(/!`([^`]+)`/g)].map((x) => x[1]!);
    expect(shell, `${f}: one shell interpolation`).toHaveLength(1);
    expect(shell[0]).toMatch(/^npx --no-install --no-update-notifier opencode-governance (sessions|stop|inject)\b/);
  }
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
    if (/builder|validator/.test(f))
      expect(
        Object.values(fm.permission.task).every((v) => v === "deny"),
        `${f} is a leaf`,
      ).toBe(true);
  }
});

test("each agent's OpenCode task permissions match the plugin's default allow-list for it", async () => {
  const { DEFAULT_CONFIG } = await import("../../governance/config/config.ts");
  const dir = path.join(ROOT, "agents");
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".md"))) {
    const name = f.replace(/\.md$/, "");
    const fm = parseYaml(/^---\n([\s\S]*?)\n---/.exec(fs.readFileSync(path.join(dir, f), "utf8"))![1]!) as {
      mode: string;
      permission: { task: Record<string, string> };
    };
    const allowed = Object.entries(fm.permission.task)
      .filter(([, v]) => v === "allow")
      .map(([k]) => k)
      .sort();
    const policy = DEFAULT_CONFIG.agents[name];
    expect(policy, `${name} has no default policy in governance/config/config.ts`).toBeDefined();
    expect(allowed, `${name}: agents/${f} task allow-list differs from the governance default`).toEqual([...policy!.mayDelegateTo].sort());
    expect(fm.mode === "primary", `${name}: mode matches role`).toBe(policy!.role === "primary");
  }
});

/**
 * Seed 003's permission profiles, line by line, for the `bash`, `edit` and `write` keys of each shipped agent: the
 * coordinator may only look at git, the executor runs tests with npm or pnpm and never edits, the builder (a leaf)
 * edits and runs anything but `rm -rf /*` and `sudo`, the validator only reads and tests. Everything not listed is
 * `"*": deny` for the non-builders. A change to a profile is a change to this table, on purpose.
 */
const PROFILES: Record<string, { edit: string; bash: Record<string, string> }> = {
  "governance-coordinator": { edit: "deny", bash: { "*": "deny", "git status*": "allow", "git log*": "allow", "git diff*": "allow" } },
  "governance-high": { edit: "deny", bash: { "*": "deny", "git status*": "allow", "git diff*": "allow" } },
  "governance-planner": { edit: "deny", bash: { "*": "deny", "git status*": "allow", "git log*": "allow" } },
  "governance-executor": {
    edit: "deny",
    bash: { "*": "deny", "git status*": "allow", "git diff*": "allow", "npm test*": "allow", "pnpm test*": "allow" },
  },
  "governance-verifier": {
    edit: "deny",
    bash: { "*": "deny", "git status*": "allow", "git diff*": "allow", "npm test*": "allow", "pnpm test*": "allow" },
  },
  "governance-builder": { edit: "allow", bash: { "*": "allow", "rm -rf /*": "deny", "sudo *": "deny" } },
  "governance-validator": {
    edit: "deny",
    bash: { "*": "deny", "grep *": "allow", "find *": "allow", "ls*": "allow", "cat *": "allow", "npm test*": "allow", "pnpm test*": "allow" },
  },
};

test("each shipped agent's bash and edit lines are its seed 003 permission profile (the executor runs npm and pnpm tests)", () => {
  const dir = path.join(ROOT, "agents");
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".md"));
  expect(files.map((f) => f.replace(/\.md$/, "")).sort()).toEqual(Object.keys(PROFILES).sort());
  for (const f of files) {
    const name = f.replace(/\.md$/, "");
    const fm = parseYaml(/^---\n([\s\S]*?)\n---/.exec(fs.readFileSync(path.join(dir, f), "utf8"))![1]!) as {
      permission: { edit: string; write?: string; bash: Record<string, string> };
    };
    const want = PROFILES[name]!;
    expect(fm.permission.edit, `${name}: edit`).toBe(want.edit);
    // OpenCode 1.18 folds `write` into `edit`; a separate `write` line must not say otherwise.
    if (fm.permission.write !== undefined) expect(fm.permission.write, `${name}: write`).toBe(want.edit);
    expect(fm.permission.bash, `${name}: bash lines`).toEqual(want.bash);
    // Order matters to OpenCode (the last matching line wins): the catch-all comes first so every exception overrides it.
    expect(Object.keys(fm.permission.bash)[0], `${name}: "*" first`).toBe("*");
  }
});

test("an agent text that names a host's tool names it on both hosts (OpenCode 1 `task`/`bash`, OpenCode 2 `subagent`/`shell`)", () => {
  // The same agents/*.md reach projects of either host (init copies them; 2.0.15 reads their OpenCode 1
  // `permission:` maps, `task` → `subagent` and `bash` → `shell`): a body naming one host's tool alone is wrong on the other.
  const pairs = (["delegateTool", "shellTool"] as const).map((k) => [HOST_LINES[1][k], HOST_LINES[2][k]] as const);
  const dir = path.join(ROOT, "agents");
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".md"))) {
    const body = fs.readFileSync(path.join(dir, f), "utf8").replace(/^---\n[\s\S]*?\n---\n/, "");
    for (const [v1, v2] of pairs) {
      const named = (tool: string) => body.includes(`\`${tool}\``);
      expect(named(v1), `${f} names only one of \`${v1}\` (OpenCode 1) and \`${v2}\` (OpenCode 2)`).toBe(named(v2));
    }
  }
});
