import fs from "node:fs/promises";
import path from "node:path";
import { compareVersions, hostLineOf, OLDEST_SUPPORTED_V1 } from "../../governance/host/host-lines.ts";
import type { Runtime } from "../wiring/runtime.ts";

/**
 * The OpenCode release running the plugin, read from the package the binary ships in (npm installs it as
 * `…/opencode-<platform>/bin/opencode` next to that package's `package.json`). OpenCode 1 hands plugins no version,
 * and `opencode --version` costs a second OpenCode start (~2 s of CPU, measured), so it is never spawned. An install
 * without a package (the curl installer) gives null: nothing is claimed then.
 */
async function hostVersion(execPath: string): Promise<string | null> {
  for (const up of ["..", "../.."]) {
    try {
      const pkg = JSON.parse(await fs.readFile(path.join(path.dirname(execPath), up, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (typeof pkg.name === "string" && pkg.name.startsWith("opencode") && typeof pkg.version === "string") return pkg.version;
    } catch {
      // not there: try the next folder up
    }
  }
  return null;
}

/**
 * Behind start-up, once: which OpenCode 1 release runs the plugin. Recorded (`host_detected`) for `doctor`; on a
 * release older than the oldest verified one (npm run test:compat) the user is told once, by the audit log and a
 * toast, instead of a plugin that silently half-works.
 */
export function detectHost(rt: Runtime, execPath = process.execPath): void {
  if (!/^opencode/i.test(path.basename(execPath))) return;
  void hostVersion(execPath)
    .then(async (version) => {
      const line = version ? (hostLineOf(version) ?? null) : 1;
      // What later lines name as the host (e.g. `governance_gap`): known from here on.
      if (version) rt.host.version = version;
      await rt.ctx.record("host_detected", { line, version });
      if (version && line === 1 && compareVersions(version, OLDEST_SUPPORTED_V1) < 0) {
        const message = `OpenCode ${version} is older than ${OLDEST_SUPPORTED_V1}, the oldest release opencode-governance is verified on: update OpenCode.`;
        await rt.ctx.record("host_unsupported", { version, oldestSupported: OLDEST_SUPPORTED_V1 });
        await rt.ctx.api.toast(message, "warning");
      }
    })
    .catch((error: unknown) => rt.ctx.reportHookError("host-version", error));
}
