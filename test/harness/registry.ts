import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "fs-extra";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./paths.ts";

/**
 * A real npm registry on 127.0.0.1: Verdaccio (the `verdaccio` dev dependency), with a throwaway storage, uplinked to
 * the registry this machine is configured for (`npm config get registry`) so a published package's own dependencies
 * resolve through it. Publishing needs a user: one is registered through the registry's own CouchDB-style user
 * route (what `npm adduser` calls) and its token written to a private npmrc, so no prompt and no machine config is
 * touched.
 *
 * Verdaccio 6's command-line entry refuses Node < 22; its programmatic `runServer` works on the Node 20 this project
 * supports, so the registry runs as `node -e` around `runServer` in its own process group.
 */
export type Registry = {
  url: string;
  /** An npmrc with `registry=` and the publish token for this registry; pass as `--userconfig`. */
  npmrc: string;
  /** Everything Verdaccio logged (its `http` level lists every request: `GET /pkg/-/pkg-1.0.0.tgz`). */
  logs(): string;
  publish(tarball: string): void;
  stop(): Promise<void>;
};

export function machineRegistry(): string {
  const url = execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  return url.endsWith("/") ? url : `${url}/`;
}

export async function startRegistry(opts: { uplink?: string } = {}): Promise<Registry> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-registry-"));
  const uplink = opts.uplink ?? machineRegistry();
  const configFile = path.join(root, "config.yaml");
  // `opencode-governance` is never proxied: what OpenCode installs must be what this test published.
  fs.writeFileSync(
    configFile,
    [
      `storage: ${JSON.stringify(path.join(root, "storage"))}`,
      "auth:",
      "  htpasswd:",
      `    file: ${JSON.stringify(path.join(root, "htpasswd"))}`,
      "    max_users: 10",
      "uplinks:",
      "  upstream:",
      `    url: ${JSON.stringify(uplink)}`,
      "    timeout: 60s",
      "packages:",
      "  'opencode-governance':",
      "    access: $all",
      "    publish: $authenticated",
      "  '**':",
      "    access: $all",
      "    publish: $authenticated",
      "    proxy: upstream",
      "log: { type: stdout, format: json, level: http }",
      "",
    ].join("\n"),
  );
  const runner = [
    // Resolved as Node resolves the package (6.8.0 ships CommonJS only, docs/decisions/0023-node-20-dependencies.md).
    `const { createRequire } = await import("node:module");`,
    `const { runServer } = createRequire(${JSON.stringify(path.join(REPO_ROOT, "package.json"))})("verdaccio");`,
    `const app = await runServer(${JSON.stringify(configFile)});`,
    `const server = app.listen(0, "127.0.0.1", () => console.log("registry listening on " + server.address().port));`,
  ].join("\n");
  const child: ChildProcess = spawn(process.execPath, ["--input-type=module", "-e", runner], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const kill = () => {
    try {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  process.once("exit", kill);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`verdaccio did not listen in 30 s:\n${out}`)), 30_000);
    child.stdout!.on("data", () => {
      const m = /registry listening on (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`verdaccio exited (${code}):\n${out}`));
    });
  });
  const url = `http://127.0.0.1:${port}/`;
  const res = await fetch(new URL("-/user/org.couchdb.user:e2e", url), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "e2e", password: "e2e-password" }),
  });
  const body = (await res.json()) as { token?: string };
  if (!res.ok || !body.token) throw new Error(`could not register a publisher on ${url}: ${res.status} ${JSON.stringify(body)}`);
  const npmrc = path.join(root, "npmrc");
  fs.writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${body.token}\n`);

  return {
    url,
    npmrc,
    logs: () => out,
    publish: (tarball) => {
      execFileSync("npm", ["publish", tarball, "--userconfig", npmrc, "--registry", url, "--access", "public", "--loglevel=warn"], {
        cwd: root,
        stdio: "pipe",
        env: { ...process.env, npm_config_userconfig: npmrc },
      });
    },
    stop: async () => {
      kill();
      await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on("close", () => resolve())));
      fs.removeSync(root);
    },
  };
}

/** `npm pack` of this repository as it is built now (`npm test` builds first); returns the tarball's path. */
export function packRepository(into: string): string {
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", into, "--loglevel=error"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [info] = JSON.parse(out) as { filename: string }[];
  return path.join(into, path.basename(info!.filename));
}
