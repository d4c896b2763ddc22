import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { learnAgents } from "../../../plugin/opencode-2/host-facts.ts";
import { pluginFixture } from "../fixture.ts";

/**
 * OpenCode 2 has no `config` hook and reports no agent's mode or permissions, so its adapter reads the agent files
 * OpenCode reads, as `init` does (docs/decisions/0030-project-agents-named.md): named in the file this start generated.
 */
test("OpenCode 2: the project's agent files are named in the governance.yaml this start generated, and remembered for refusals", async () => {
  const f = await pluginFixture();
  try {
    mkdirSync(path.join(f.dir, ".opencode", "agent"), { recursive: true });
    writeFileSync(path.join(f.dir, ".opencode", "agent", "orchestrator.md"), "---\nmode: primary\npermission:\n  task:\n    worker: allow\n---\n");
    await learnAgents(f.rt);
    const text = readFileSync(path.join(f.dir, ".opencode", "governance.yaml"), "utf8");
    expect(text).toContain(
      '  # from .opencode/agent/orchestrator.md: mode primary, task "worker": allow\n  orchestrator:\n    role: primary\n    mayDelegateTo: ["worker"]\n',
    );
    expect(f.rt.ctx.config.agents.orchestrator).toEqual({ role: "primary", mayDelegateTo: ["worker"] });
    expect(f.rt.ctx.hostAgents.get("orchestrator")).toMatchObject({ mode: "primary" });
  } finally {
    await f.close();
  }
});
