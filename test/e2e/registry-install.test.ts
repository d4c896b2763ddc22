import { spawnSync } from "node:child_process";
import fs from "fs-extra";
import os from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { missing } from "../harness/system-tools.ts";
import { auditEvents, e2eHost, runOpencode, waitFor } from "../harness/index.ts";
import { packRepository, startRegistry, type Registry } from "../harness/registry.ts";
import { startTui } from "../harness/tui.ts";

const PREFIX_HEADING = "## Governance Context (opencode-governance)";

/**
 * The install a user does, end to end, against a real registry: the package as `npm pack` builds it is published to
 * Verdaccio on 127.0.0.1; in a fresh project `npx opencode-governance init` (fetched from that registry) lists the
 * plugin in opencode.json; then the user starts `opencode` (the terminal UI, in tmux) and OpenCode's OWN plugin
 * installer fetches `opencode-governance` from the registry (npm_config_registry, which OpenCode 1.18's installer
 * honours — docs/decisions/0005-opencode-plugin-install.md) into its cache, loads it, and the conversation typed into
 * the TUI is governed. Nothing is pre-linked for the plugin: the harness warms only
 * OpenCode's own `@opencode-ai/plugin` folders, not `$XDG_CACHE_HOME/opencode/packages/`, where npm plugins go.
 */
const SKIP = missing("tmux");
describe.skipIf(SKIP !== "")(SKIP || "install from a registry, as a user does (Verdaccio + npx + OpenCode's own installer)", () => {
  let registry: Registry;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-pack-"));
  const { model, project } = e2eHost({
    respond: () => ({ text: "Hello from the scripted model." }),
    plugin: "none",
    serve: false,
    beforeServe: async () => {
      registry = await startRegistry();
      registry.publish(packRepository(scratch));
    },
    afterServe: async () => {
      await registry?.stop();
      fs.removeSync(scratch);
    },
  });

  const tarballGets = () => (registry.logs().match(/requested 'GET \/opencode-governance\/-\/opencode-governance-[\d.]+\.tgz'/g) ?? []).length;
  const userEnv = () => ({ ...project.env, npm_config_registry: registry.url, npm_config_yes: "true" });
  const npx = (args: string[]) =>
    spawnSync("npx", ["--yes", "opencode-governance", ...args], { cwd: project.dir, env: userEnv(), encoding: "utf8", timeout: 180_000 });

  test("the published package's metadata names the plugin entry OpenCode resolves", async () => {
    const res = await fetch(new URL("opencode-governance", registry.url));
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { "dist-tags": { latest: string }; versions: Record<string, { exports?: Record<string, string>; main?: string }> };
    const latest = doc.versions[doc["dist-tags"].latest]!;
    expect(latest.exports?.["./server"] ?? latest.main).toBe("./dist/plugin/index.js");
  });

  test("npx opencode-governance init, from the registry, lists the plugin in the fresh project", async () => {
    const init = npx(["init"]);
    expect(init.status, `${init.stdout}\n${init.stderr}`).toBe(0);
    const config = fs.readJsonSync(path.join(project.dir, "opencode.json")) as { plugin?: unknown[] };
    expect(config.plugin).toEqual(["opencode-governance"]);
    expect(fs.existsSync(path.join(project.dir, ".opencode", "governance.yaml"))).toBe(true);
    // What the published package carries arrives in the project: agents, OpenCode commands, the editor schema.
    expect(fs.readdirSync(path.join(project.dir, ".opencode", "agent")).length).toBeGreaterThan(0);
    expect(fs.readdirSync(path.join(project.dir, ".opencode", "command"))).toContain("governance.md");
    expect(fs.existsSync(path.join(project.dir, ".opencode", "governance.schema.json"))).toBe(true);
    // npx fetched the tarball from our registry (Verdaccio's request log is flushed asynchronously: wait for it).
    await waitFor(() => tarballGets() >= 1, "the registry to log npx's tarball download", 10_000);
  });

  // Its own npm cache: npx's download above must not satisfy OpenCode's install from the local cache.
  const openCodeEnv = () => ({ npm_config_registry: registry.url, npm_config_cache: path.join(project.home, "opencode-npm-cache") });
  const pluginCache = () => path.join(project.home, "cache", "opencode", "packages");

  test("a newcomer's first `opencode` (the TUI, in tmux): OpenCode installs the plugin from the registry itself, loads it, and the conversation on screen is governed", async () => {
    expect(fs.existsSync(path.join(pluginCache(), "opencode-governance@latest"))).toBe(false);
    const before = tarballGets();
    const from = model.requests.length;

    const tui = startTui(project, [], { env: openCodeEnv() });
    try {
      await tui.waitForScreen("Ask anything", "the prompt of a new session", 120_000);
      tui.type("Say hello.");
      tui.press("Enter");
      await tui.waitForScreen("Hello from the scripted model.", "the model's answer on the screen", 60_000);
    } finally {
      tui.kill();
    }

    // OpenCode's installer put the package in its cache, fetched from this registry.
    const installed = path.join(pluginCache(), "opencode-governance@latest", "node_modules", "opencode-governance", "package.json");
    expect(fs.existsSync(installed)).toBe(true);
    await waitFor(() => tarballGets() > before, "the registry to log OpenCode's tarball download", 10_000);
    // … and it governs: the plugin started here and every agent request of the conversation carries the prefix.
    expect(auditEvents(project.governanceDir).some((e) => e.type === "plugin_started")).toBe(true);
    const agentRequests = model.requests.slice(from).filter((r) => r.kind === "agent");
    expect(agentRequests.length).toBeGreaterThan(0);
    for (const r of agentRequests) expect(r.system).toContain(PREFIX_HEADING);
  }, 240_000);

  test("`opencode run` in the same project is governed by the installed plugin too", async () => {
    const from = model.requests.length;
    const result = await runOpencode(project, ["Say hello."], { env: openCodeEnv(), timeoutMs: 120_000 });
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    const agentRequests = model.requests.slice(from).filter((r) => r.kind === "agent");
    expect(agentRequests.length).toBeGreaterThan(0);
    for (const r of agentRequests) expect(r.system).toContain(PREFIX_HEADING);
  }, 180_000);

  test("doctor, from the registry install, confirms the plugin loaded", () => {
    const doctor = npx(["doctor"]);
    expect(doctor.stdout).toContain("plugin loaded in OpenCode");
    expect(doctor.status, `${doctor.stdout}\n${doctor.stderr}`).toBe(0);
  });
});
