import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { loadUserSettings } from "../../../governance/config/user-config.ts";

const dirs: string[] = [];
function userConfig(text: string | null): NodeJS.ProcessEnv {
  const xdg = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-user-config-"));
  dirs.push(xdg);
  if (text !== null) {
    fs.mkdirSync(path.join(xdg, "opencode"));
    fs.writeFileSync(path.join(xdg, "opencode", "governance.yaml"), text);
  }
  return { XDG_CONFIG_HOME: xdg, HOME: xdg };
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("the user's own governance settings ($XDG_CONFIG_HOME/opencode/governance.yaml)", () => {
  test("read and checked: enforcement and the stop bounds", async () => {
    const loaded = await loadUserSettings(userConfig("enforcement: log-only\nstop:\n  deadline: 8s\n"));
    expect(loaded).toMatchObject({ settings: { enforcement: "log-only", stop: { deadline: 8_000 } }, problems: [] });
  });

  test("missing is no problem; broken YAML, an unknown key or an alias bomb is one problem and no settings", async () => {
    expect(await loadUserSettings(userConfig(null))).toMatchObject({ settings: {}, problems: [] });
    for (const text of ["enforcement: [", "enforcment: log-only\n", `a: &a [x]\n${Array.from({ length: 12 }, (_, i) => `b${i}: *a`).join("\n")}\n`]) {
      const loaded = await loadUserSettings(userConfig(text));
      expect(loaded.settings, text).toEqual({});
      expect(loaded.problems, text).toHaveLength(1);
    }
  });
});
