import { execFile } from "node:child_process";
import path from "node:path";
import type { Runtime } from "../../runtime/runtime.ts";
import { compareVersions, hostLineOf, OLDEST_SUPPORTED_V1 } from "../host-lines.ts";

/** `opencode --version` of the binary running this plugin (OpenCode 1 hands plugins no version), or null. */
function hostVersion(execPath: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(execPath, ["--version"], { timeout: 5_000, env: { ...process.env, OPENCODE_DISABLE_AUTOUPDATE: "1" } }, (error, stdout) => {
      const v = /\d+\.\d+\.\d+[\w.-]*/.exec(String(stdout ?? ""))?.[0];
      resolve(error || !v ? null : v);
    });
  });
}

/**
 * Behind start-up, once: which OpenCode 1 release runs the plugin. Recorded (`host_detected`) for `doctor`; on a
 * release older than the oldest verified one (npm run test:compat) the user is told once, by the audit log and a
 * toast, instead of a plugin that silently half-works.
 */
export function detectV1Host(rt: Runtime, execPath = process.execPath): void {
  if (!/^opencode/i.test(path.basename(execPath))) return;
  void hostVersion(execPath)
    .then(async (version) => {
      if (!version) return;
      const line = hostLineOf(version);
      await rt.ctx.record("host_detected", { line: line ?? null, version });
      if (line === 1 && compareVersions(version, OLDEST_SUPPORTED_V1) < 0) {
        const message = `OpenCode ${version} is older than ${OLDEST_SUPPORTED_V1}, the oldest release opencode-governance is verified on: update OpenCode.`;
        await rt.ctx.record("host_unsupported", { version, oldestSupported: OLDEST_SUPPORTED_V1 });
        await rt.ctx.api.toast(message, "warning");
      }
    })
    .catch((error: unknown) => rt.ctx.reportHookError("host-version", error));
}
