import { spawnSync } from "node:child_process";
import fs from "fs-extra";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { auditEvents, e2eHost, projectCli, runOpencode, type ScriptedModel, type TestProject } from "../harness/index.ts";
import { packRepository } from "../harness/registry.ts";

const PREFIX_HEADING = "## Governance Context (opencode-governance)";
const SHIM = path.join(".opencode", "plugins", "opencode-governance.js");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-tarball-"));
let packed: string | undefined;
/** `npm pack` of this build, once for the file. */
const tarball = () => (packed ??= packRepository(scratch));
afterAll(() => fs.removeSync(scratch));
const HELLO = () => ({ text: "Hello from the scripted model." });

/** `opencode run` with no registry reachable for OpenCode: the plugin starts and every agent step carries the prefix. */
async function expectGovernedRun(model: ScriptedModel, project: TestProject, closed: string): Promise<void> {
  const from = model.requests.length;
  const result = await runOpencode(project, ["Say hello."], { env: openCodeEnv(project, closed), timeoutMs: 180_000 });
  expect(result.code, result.stderr.slice(-3000)).toBe(0);
  expect(auditEvents(project.governanceDir).some((e) => e.type === "plugin_started")).toBe(true);
  const agentRequests = model.requests.slice(from).filter((r) => r.kind === "agent");
  expect(agentRequests.length).toBeGreaterThan(0);
  for (const r of agentRequests) expect(r.system).toContain(PREFIX_HEADING);
}

/**
 * The install route that works while the package is not on the public npm registry (docs/decisions/0031-install-without-registry.md),
 * on the real OpenCode 1.18.33: the tarball `npm pack` makes of this build, installed into a fresh project with
 * `npm install --save-dev <tarball>` (its dependencies from the machine's registry, as a user's would come), then
 * `npx opencode-governance init` — the copy in the project's node_modules — and `opencode run`. OpenCode runs with
 * `npm_config_registry` on a closed 127.0.0.1 port: had `init` listed the package by name, OpenCode would have had to
 * fetch it and could not (the second describe shows exactly that, and what `doctor` then says).
 */
describe("install from a tarball, no registry for the plugin", () => {
  let closed: string;
  const { model, project } = e2eHost({ respond: HELLO, plugin: "none", serve: false });
  beforeAll(async () => {
    closed = await closedRegistry();
    // As in any npm project: OpenCode snapshots the project at every step, and node_modules is not the agent's work.
    fs.appendFileSync(path.join(project.dir, ".gitignore"), "node_modules/\n");
  });

  /** What the newcomer types in the project, with OpenCode's and npx's registry on a closed port. */
  const inProject = (cmd: string, args: string[]) =>
    spawnSync(cmd, args, { cwd: project.dir, env: { ...project.env, npm_config_registry: closed }, encoding: "utf8", timeout: 120_000 });

  test("npm install --save-dev <tarball> puts the package in the project's node_modules", () => {
    const install = npmInstall(project, tarball());
    expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);
    expect(fs.readJsonSync(path.join(project.dir, "package.json")).devDependencies["opencode-governance"]).toMatch(/^file:.*\.tgz$/);
  }, 180_000);

  test("npx opencode-governance init: --dry-run shows the local plugin file; init writes it and lists nothing by name; twice changes nothing", () => {
    const dry = inProject("npx", ["opencode-governance", "init", "--dry-run"]);
    expect(dry.status, `${dry.stdout}\n${dry.stderr}`).toBe(0);
    expect(dry.stdout).toContain("is installed in this project's node_modules");
    expect(dry.stdout).toContain(`would write ${SHIM}`);
    expect(fs.existsSync(path.join(project.dir, SHIM))).toBe(false);

    const init = inProject("npx", ["opencode-governance", "init"]);
    expect(init.status, `${init.stdout}\n${init.stderr}`).toBe(0);
    expect(init.stdout).toContain(`wrote ${SHIM}`);
    expect(fs.readFileSync(path.join(project.dir, SHIM), "utf8")).toContain('export { default } from "opencode-governance";');
    expect(fs.readJsonSync(path.join(project.dir, "opencode.json")).plugin).toBeUndefined();

    const again = inProject("npx", ["opencode-governance", "init"]);
    expect(again.stdout).toContain("nothing to change");
  });

  test("`opencode run` with no registry reachable: the installed plugin starts and the model's request carries the prefix", async () => {
    await expectGovernedRun(model, project, closed);
    // OpenCode never tried a registry install: it has no cache folder for the plugin.
    expect(fs.existsSync(path.join(project.home, "cache", "opencode", "packages"))).toBe(false);
  }, 240_000);

  test("npx opencode-governance doctor: the local plugin, loaded", () => {
    const doctor = inProject("npx", ["opencode-governance", "doctor"]);
    expect(doctor.stdout).toContain(`✓ local plugin ${path.join(project.dir, SHIM)}`);
    expect(doctor.stdout).toContain("✓ plugin loaded in OpenCode");
    expect(doctor.status, `${doctor.stdout}\n${doctor.stderr}`).toBe(0);
  });
});

/**
 * What a newcomer met before: the plugin listed by name, a registry that does not have it. OpenCode 1.18.33 leaves an
 * empty cache folder, logs nothing and runs ungoverned; `doctor` must say what happened and how to fix it — and the fix
 * it prints (the tarball route) must work in that same project.
 */
describe("OpenCode could not install the plugin listed by name: doctor says so, and its fix works", () => {
  let closed: string;
  const { model, project } = e2eHost({ respond: HELLO, plugin: "none", opencodeConfig: { plugin: ["opencode-governance"] }, serve: false });
  beforeAll(async () => {
    closed = await closedRegistry();
    fs.appendFileSync(path.join(project.dir, ".gitignore"), "node_modules/\n");
  });

  const cacheFolder = () => path.join(project.home, "cache", "opencode", "packages", "opencode-governance@latest");

  test("OpenCode runs ungoverned and leaves its cache folder for the plugin empty", async () => {
    const from = model.requests.length;
    const result = await runOpencode(project, ["Say hello."], { env: openCodeEnv(project, closed), timeoutMs: 180_000 });
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    expect(auditEvents(project.governanceDir).some((e) => e.type === "plugin_started")).toBe(false);
    expect(model.requests.slice(from).some((r) => r.system?.includes(PREFIX_HEADING))).toBe(false);
    expect(fs.readdirSync(cacheFolder())).toEqual([]);
  }, 240_000);

  test("doctor names the failed install and prints the tarball route", async () => {
    const doctor = await projectCli(project, ["doctor"]);
    expect(doctor.stdout).toContain(`✗ OpenCode could not install "opencode-governance" from the npm registry: its cache folder ${cacheFolder()} is empty`);
    expect(doctor.stdout).toContain("npm install --save-dev <path to opencode-governance-<version>.tgz>");
    expect(doctor.code).toBe(1);
  });

  test("the fix: npm install <tarball>, init (the by-name entry goes), and OpenCode is governed without the registry", async () => {
    const install = npmInstall(project, tarball());
    expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);
    const init = spawnSync("npx", ["opencode-governance", "init"], {
      cwd: project.dir,
      env: { ...project.env, npm_config_registry: closed },
      encoding: "utf8",
    });
    expect(init.stdout).toContain('removed "opencode-governance" from the plugin list in opencode.json');
    expect(fs.readJsonSync(path.join(project.dir, "opencode.json")).plugin).toEqual([]);

    await expectGovernedRun(model, project, closed);
    const doctor = await projectCli(project, ["doctor"]);
    expect(doctor.stdout).not.toContain("could not install");
    expect(doctor.code, doctor.stdout).toBe(0);
  }, 300_000);
});

/** A registry URL nothing listens on: a port taken from the OS and released. */
async function closedRegistry(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/`;
}

/** OpenCode's environment: the closed registry, and an npm cache of its own (nothing to take a tarball from). */
function openCodeEnv(project: TestProject, registry: string): NodeJS.ProcessEnv {
  return { npm_config_registry: registry, npm_config_cache: path.join(project.home, "opencode-npm-cache") };
}

/**
 * `npm install --save-dev <tarball>` as the user runs it: the package's own dependencies come from the registry this
 * machine is configured for, through its npm cache (the machine's, so a rerun does not download them again).
 */
function npmInstall(project: TestProject, tarball: string) {
  const cache = spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).stdout.trim();
  return spawnSync("npm", ["install", "--save-dev", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", tarball], {
    cwd: project.dir,
    env: { ...project.env, npm_config_cache: cache },
    encoding: "utf8",
    timeout: 170_000,
  });
}
