import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type DashboardProcess, startDashboardProcess } from "../cli/dashboard-process.ts";
import { lazy } from "./e2e-host.ts";
import { CHROMIUM } from "./system-tools.ts";
import type { TestProject } from "./test-project.ts";

/** Debian's chromium, headless, nothing fetched in the background (no browser download: harness/system-tools.ts). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Chromium in a throwaway profile for the file, launched in a beforeAll and closed in the afterAll (called at describe
 * level after `e2eHost`, it closes before the server stops). `page` is the profile's first tab.
 */
export function e2eChromium(opts: { viewport?: { width: number; height: number } } = {}): { context: BrowserContext; page: Page } {
  let userDataDir: string | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    userDataDir = mkdtempSync(path.join(tmpdir(), "ocg-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM as string,
      headless: true,
      args: CHROMIUM_ARGS,
      ...(opts.viewport ? { viewport: opts.viewport } : {}),
    });
    page = context.pages()[0] ?? (await context.newPage());
  });
  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });
  return { context: lazy("Chromium", () => context), page: lazy("Chromium's page", () => page) };
}

/**
 * The user's `opencode-governance dashboard` for the project, started in a beforeAll as the same user as OpenCode (the
 * project's HOME/XDG dirs: it signs queue directives with the per-user key the plugin checks), stopped in the afterAll.
 */
export function e2eDashboard(project: TestProject): DashboardProcess {
  let dash: DashboardProcess | undefined;
  beforeAll(async () => {
    dash = await startDashboardProcess(project.dir, [], project.env);
  });
  afterAll(async () => dash?.stop());
  return lazy("the dashboard", () => dash);
}
