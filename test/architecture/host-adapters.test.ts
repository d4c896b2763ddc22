import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";
import { ADAPTERS as LISTED, adapterFolder } from "../../plugin/adapters.ts";

/**
 * One port, two adapters (issue 25 item 4; docs/architecture.md "Two host lines, one set of handlers"):
 * - plugin/hooks/ and the other shared folders of plugin/ are host-neutral: no `@opencode-ai/plugin` import, nothing
 *   from an adapter folder (so no OpenCode 2 type either);
 * - the adapters are the ones plugin/adapters.ts lists (one per HOST_LINES row, checked by the compiler); every
 *   adapter folder under plugin/ is listed, and each exports its contract object (`adapter` of its adapter.ts, typed
 *   `satisfies HostAdapter`: the members have the same names on every host because the type names them);
 * - the adapters are alike in shape (the same file names for the same jobs) and none imports another;
 * - each host's events are parsed once: its parser (the adapter's `parseEvents`) is called from its event source only,
 *   and telemetry reads the parsed events, never a raw one.
 */
const LINES = Object.values(LISTED).map((a) => a.line);
const ADAPTERS = LINES.map((line) => `plugin/${adapterFolder(line)}`);
const SHARED = ["plugin/hooks", "plugin/runtime", "plugin/sessions", "plugin/stop", "plugin/budget", "plugin/telemetry"] as const;
const HOST_API = "@opencode-ai/plugin";

const tsNames = (dir: string) => readdirSync(join(REPO_ROOT, dir)).filter((n) => n.endsWith(".ts"));
const importsOf = (file: string) => ts.preProcessFile(readFileSync(join(REPO_ROOT, file), "utf8"), true, true).importedFiles.map((f) => f.fileName);
/** The repository path a relative import lands on (`plugin/opencode-2/types.ts`), or the package name. */
const target = (file: string, spec: string) => (spec.startsWith(".") ? relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), spec)) : spec);
const inside = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** What `files` import that breaks `rule`, as "file imports target". */
function offending(dirs: readonly string[], rule: (to: string, from: string) => boolean): string[] {
  return dirs.flatMap((dir) =>
    tsNames(dir).flatMap((name) => {
      const file = `${dir}/${name}`;
      return importsOf(file)
        .map((spec) => target(file, spec))
        .filter((to) => rule(to, file))
        .map((to) => `${file} imports ${to}`);
    }),
  );
}

describe("one port, two adapters", () => {
  it("plugin/hooks/ and the shared plugin folders import no host type and no adapter", () => {
    const hostBound = (to: string) => to === HOST_API || to.startsWith(`${HOST_API}/`) || ADAPTERS.some((a) => inside(to, a));
    expect(offending(SHARED, hostBound)).toEqual([]);
  });

  it("every adapter folder is listed in plugin/adapters.ts and exports its contract object", async () => {
    const folders = readdirSync(join(REPO_ROOT, "plugin"), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(REPO_ROOT, "plugin", e.name, "adapter.ts")))
      .map((e) => `plugin/${e.name}`);
    expect(folders.sort()).toEqual([...ADAPTERS].sort());
    for (const line of LINES) {
      const mod = (await import(`../../plugin/${adapterFolder(line)}/adapter.ts`)) as { adapter: unknown };
      expect(mod.adapter, `plugin/${adapterFolder(line)}`).toBe(LISTED[line]);
    }
  });

  it("the adapters have the same file names, and none imports another", () => {
    for (const a of ADAPTERS) expect(tsNames(a), a).toEqual(tsNames(ADAPTERS[0] as string));
    for (const job of ["adapter.ts", "setup.ts", "events.ts", "event-source.ts", "api.ts", "host-facts.ts", "model-step.ts", "tool-calls.ts"])
      expect(tsNames(ADAPTERS[0] as string)).toContain(job);
    const other = (to: string, from: string) => ADAPTERS.some((a) => inside(to, a) && !inside(from, a));
    expect(offending(ADAPTERS, other)).toEqual([]);
  });

  it("each host's events are parsed once: by its event source, which hands the answer to governance and telemetry", () => {
    const plugin = (dir: string): string[] =>
      readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? plugin(`${dir}/${e.name}`) : e.name.endsWith(".ts") ? [`${dir}/${e.name}`] : [],
      );
    const parserUsers = plugin("plugin").filter((file) => importsOf(file).some((spec) => ADAPTERS.some((a) => target(file, spec) === `${a}/events.ts`)));
    // Its event source calls it; its adapter.ts only names it as the contract's `parseEvents`.
    expect(parserUsers.sort()).toEqual(ADAPTERS.flatMap((a) => [`${a}/adapter.ts`, `${a}/event-source.ts`]).sort());
    for (const line of LINES) {
      const a = `plugin/${adapterFolder(line)}`;
      const source = readFileSync(join(REPO_ROOT, a, "event-source.ts"), "utf8");
      // The parser is the contract's `parseEvents` (whatever the function is called in events.ts): called once.
      const parser = LISTED[line].parseEvents.name;
      expect(source.match(new RegExp(`\\b${parser}\\(`, "g")), a).toHaveLength(1);
      // Through `handleEvents` (plugin/hooks/event.ts), which hands each parse to telemetry and governance.
      expect(source, a).toContain("handleEvents(rt, ");
    }
    // Telemetry takes parsed events: its entry has no raw-event parameter.
    expect(readFileSync(join(REPO_ROOT, "plugin/telemetry/telemetry.ts"), "utf8")).not.toMatch(/\bevent\(raw/);
  });
});
