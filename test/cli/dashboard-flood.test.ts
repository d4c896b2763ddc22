import { spawn } from "node:child_process";
import net from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { startDashboard } from "../../cli/dashboard-server.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { CLI_ENTRY } from "../harness/paths.ts";
import { createCliProject, type CliProject } from "./cli-project.ts";
import { assertCliBuilt } from "./run-cli.ts";

/**
 * Issue 28 §4: idle connections that never show the token are bounded (an idle timeout, a cap that closes the one
 * idle longest), so a flood of them cannot keep the user's own request out. 127.0.0.1 only, bounded loops.
 */
const ROOT = "ses_floodroot0000000000000001";
const FLOOD = 800;
const FD_LIMIT = 512;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function project(): Promise<CliProject> {
  const p = await createCliProject();
  await p.put({ sessionId: ROOT, agent: "governance-coordinator" });
  cleanups.push(() => p.cleanup());
  return p;
}

/** The real `opencode-governance dashboard`, started the way a user does but with a small `ulimit -n`. */
function startLimited(dir: string): Promise<{ port: number; token: string; stop(): void }> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", `ulimit -n ${FD_LIMIT} && exec "$0" "$1" dashboard --dir "$2"`, process.execPath, CLI_ENTRY, dir], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no URL: ${out}`)), 20_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({ port: Number(m[1]), token: m[2] as string, stop: () => child.kill("SIGKILL") });
    });
    child.on("error", reject);
  });
}

/** Opens `n` connections that send nothing; resolves when each is connected or failed. */
async function idleSockets(port: number, n: number): Promise<{ sockets: net.Socket[]; closedByServer: () => number }> {
  const sockets: net.Socket[] = [];
  let closed = 0;
  for (let i = 0; i < n; i++) {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => {});
    s.on("close", () => closed++);
    sockets.push(s);
    await new Promise<void>((r) => {
      s.once("connect", () => r());
      s.once("error", () => r());
    });
  }
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
  });
  return { sockets, closedByServer: () => closed };
}

async function userRequest(port: number, token: string): Promise<number | string> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/sessions`, { headers: { "x-governance-token": token }, signal: AbortSignal.timeout(5_000) });
    await res.text();
    return res.status;
  } catch (e) {
    return `failed: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`;
  }
}

describe("dashboard connections before the token", () => {
  test(`the user's request is served while ${FLOOD} idle sockets are open (real dashboard process, ulimit -n ${FD_LIMIT})`, async () => {
    assertCliBuilt();
    const p = await project();
    const dash = await startLimited(p.dir);
    cleanups.push(() => dash.stop());
    const flood = await idleSockets(dash.port, FLOOD);
    await new Promise((r) => setTimeout(r, 300));
    const results: (number | string)[] = [];
    for (let i = 0; i < 3; i++) results.push(await userRequest(dash.port, dash.token));
    console.log(`user requests under a flood of ${FLOOD} idle sockets: ${results.join(", ")}; sockets closed by the server: ${flood.closedByServer()}`);
    expect(results).toEqual([200, 200, 200]);
    expect(flood.closedByServer()).toBeGreaterThan(FLOOD - 100);
  }, 60_000);

  test("an idle connection without the token is closed after the idle timeout; one that showed it is not", async () => {
    const p = await project();
    const store = new SessionStore({ projectDir: p.dir, clock: systemClock });
    const dash = await startDashboard(
      { paths: store.paths, store, audit: new AuditLog({ paths: store.paths, clock: systemClock }), clock: systemClock, by: "dashboard:test" },
      { connections: { idleMs: 300, maxUnproven: 5 } },
    );
    cleanups.push(() => dash.close());
    const port = Number(new URL(dash.url).port);
    const idle = await idleSockets(port, 1);
    // The page's event stream (token in the query) stays open past the idle timeout.
    const stream = await fetch(`http://127.0.0.1:${port}/api/events?token=${dash.token}`);
    const reader = stream.body!.getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(idle.closedByServer()).toBe(1);
    expect(idle.sockets[0]!.destroyed).toBe(true);
    expect(await userRequest(port, dash.token)).toBe(200);
    // Over the cap: the oldest idle ones are closed at once, the newest kept.
    const many = await idleSockets(port, 12);
    await new Promise((r) => setTimeout(r, 100));
    expect(many.closedByServer()).toBe(7);
    expect(dash.connections.idleUnproven).toBeLessThanOrEqual(5);
    await reader.cancel();
  }, 20_000);
});
