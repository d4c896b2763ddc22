import { startDashboard } from "../dashboard-server.ts";
import { readConfig } from "../read-config.ts";
import type { CommandContext } from "./command-context.ts";

/** `dashboard [--port N]`: serves the page until Ctrl-C. */
export async function dashboardCommand(c: CommandContext): Promise<number> {
  const port = c.options.port === undefined ? 0 : Number(c.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return c.usage("--port must be a port number");
  const config = await readConfig(c.store.paths.configFile);
  const dashboard = await startDashboard(
    { ...c.control, by: `dashboard:${process.env.USER ?? "user"}` },
    { port, maxInjectLength: config.config.inject.maxLength, config: () => readConfig(c.store.paths.configFile) },
  );
  c.io.line(["bold", "dashboard for "], c.dir);
  c.io.line("open ", ["cyan", dashboard.url]);
  c.io.line(["dim", "(local only; the token in the URL is required; Ctrl-C to stop)"]);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await dashboard.close();
  return 0;
}
