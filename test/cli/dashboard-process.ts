import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { CLI_ENTRY } from "../harness/paths.ts";

/** The real `opencode-governance dashboard` process, as a user starts it, with the URL it printed. */
export type DashboardProcess = { url: string; port: number; token: string; child: ChildProcess; stderr(): string; stop(): Promise<void> };

/** `env`: the user's environment; pass the OpenCode process's own (same HOME/XDG dirs) so both share the signing key. */
export function startDashboardProcess(dir: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<DashboardProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, "dashboard", "--dir", dir, ...extraArgs], {
      env: { ...env, USER: "dashboard-test", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`dashboard printed no URL; stdout: ${stdout} stderr: ${stderr}`));
    }, 20_000);
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      const m = /(http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+))/.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[1]!,
        port: Number(m[2]),
        token: m[3]!,
        child,
        stderr: () => stderr,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGINT");
          }),
      });
    });
    child.on("error", reject);
  });
}

export type RawResponse = { status: number; headers: Record<string, string>; body: string; reset: boolean };

/**
 * Sends bytes exactly as given (no client fixes the Host, the path or the body for us) and reads the answer to the
 * end. `reset` is true when the server reset the connection instead of answering.
 */
export function rawRequest(port: number, request: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let reset = false;
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => (reset = true));
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", ...rest] = text.split("\r\n\r\n");
      const [statusLine = "", ...headerLines] = head.split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const i = line.indexOf(":");
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: rest.join("\r\n\r\n"), reset });
    });
    // Not `end()`: a half-closed client makes Node's server drop a response that is still being computed.
    // Every request says `Connection: close`, so the server closes when it has answered.
    socket.write(request);
    socket.setTimeout(10_000, () => socket.destroy());
  });
}

/** An HTTP/1.1 request with `connection: close`; the Host defaults to the one the dashboard serves. */
export function httpText(
  port: number,
  opts: { method?: string; target: string; host?: string | null; headers?: Record<string, string>; body?: string },
): string {
  const lines = [`${opts.method ?? "GET"} ${opts.target} HTTP/1.1`];
  if (opts.host !== null) lines.push(`Host: ${opts.host ?? `127.0.0.1:${port}`}`);
  for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
  if (opts.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(opts.body)}`);
  lines.push("Connection: close");
  return `${lines.join("\r\n")}\r\n\r\n${opts.body ?? ""}`;
}
