import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { governancePaths } from "../../../governance/storage/governance-paths.ts";
import { createFakeClock } from "../../../governance/time/clock.ts";
import { AuditSink } from "../../../plugin/runtime/audit-sink.ts";
import { ConfigWatcher } from "../../../plugin/runtime/config-watcher.ts";
import { createFakeTimers, T0 } from "../fixture.ts";

/** Issue 30 §4: hot reload for all three files; a broken organisation file keeps the last good one. */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-watch-"));
  dirs.push(root);
  const project = path.join(root, "p");
  fs.mkdirSync(path.join(project, ".opencode"), { recursive: true });
  const paths = governancePaths(project);
  fs.writeFileSync(paths.configFile, "delegation:\n  maxDepth: 9\n");
  const policy = path.join(root, "policy.yaml");
  const userFile = path.join(root, "cfg", "opencode", "governance.yaml");
  fs.mkdirSync(path.dirname(userFile), { recursive: true });
  const env = { HOME: root, XDG_CONFIG_HOME: path.join(root, "cfg"), OPENCODE_GOVERNANCE_POLICY: policy };
  const clock = createFakeClock(T0);
  const watcher = new ConfigWatcher(paths.configFile, new AuditSink(paths, clock, 1 << 20), createFakeTimers(clock), env);
  return { watcher, policy, userFile };
}

/** A file written twice within one mtime tick still changes size: rewrite with a trailing comment of a new length. */
let n = 0;
const write = (file: string, text: string) => fs.writeFileSync(file, `${text}#${"x".repeat(++n)}\n`, { mode: 0o644 });

describe("ConfigWatcher: the organisation's and the user's file are watched like the project's", () => {
  test("an edit to the organisation's or the user's file reloads; a broken organisation edit keeps the last good ceiling", async () => {
    const { watcher, policy, userFile } = setup();
    await watcher.reload();
    watcher.watch();
    expect(watcher.current.delegation.maxDepth).toBe(9);

    write(policy, "delegation:\n  maxDepth: 2\n");
    await watcher.check();
    expect(watcher.current.delegation.maxDepth).toBe(2);
    expect(watcher.loaded?.policy.origins["delegation.maxDepth"]).toBe("organisation");

    write(userFile, "concurrency:\n  perParent: 1\n");
    await watcher.check();
    expect(watcher.current.concurrency.perParent).toBe(1);

    write(policy, "delegation: [broken\n");
    await watcher.check();
    expect(watcher.loaded?.policy.org.source).toBe("last-good");
    expect(watcher.current.delegation.maxDepth).toBe(2);
    watcher.stop();
  });
});
