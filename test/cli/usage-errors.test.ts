import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCliProject, type CliProject } from "./cli-project.ts";
import { assertCliBuilt, runCli } from "./run-cli.ts";

let p: CliProject;
beforeAll(async () => {
  assertCliBuilt();
  p = await createCliProject();
});
afterAll(() => p?.cleanup());

/** A usage mistake: one line naming it and where the help is, exit 2, nothing on stdout (issue 39). */
describe("usage errors", () => {
  const cases: [string, string[], RegExp][] = [
    ["an unknown command", ["stauts"], /unknown command "stauts"/],
    ["an unknown option", ["status", "--bogus"], /unknown option --bogus/],
    ["an unknown short option", ["log", "-x"], /unknown option -x/],
    ["an option without its value", ["log", "--limit"], /--limit needs a value/],
    ["a value given to a switch", ["status", "--json=yes"], /--json takes no value/],
    ["a missing argument (stop without a target)", ["stop"], /stop needs a session id/],
    ["a missing argument (budget without a session)", ["budget"], /budget needs a session id/],
    ["a bad value", ["log", "--limit", "many"], /--limit must be/],
  ];
  for (const [what, args, mistake] of cases) {
    it(`${what}: one line naming it plus the --help hint, exit 2`, async () => {
      const res = await runCli(args, { cwd: p.dir });
      expect(res.code).toBe(2);
      expect(res.stdout).toBe("");
      const lines = res.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(mistake);
      expect(lines[0]).toContain("run `opencode-governance --help`");
    });
  }

  it("--help still prints the whole help on stdout, exit 0", async () => {
    const res = await runCli(["--help"], { cwd: p.dir });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Usage: opencode-governance <command>");
    expect(res.stdout.split("\n").length).toBeGreaterThan(20);
  });
});
