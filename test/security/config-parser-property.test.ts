import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseConfig } from "../../governance/config/config-parse.ts";
import { DEFAULT_CONFIG_YAML, GovernanceConfig } from "../../governance/config/config.ts";

/**
 * Issue 8 acceptance: the config parser never throws and always returns a typed result: `ok` with a config that
 * satisfies the schema (plus problems/warnings with positions), or `ok: false` with at least one located problem.
 */
function check(text: string): void {
  let result: ReturnType<typeof parseConfig> | undefined;
  expect(() => (result = parseConfig(text))).not.toThrow();
  const r = result!;
  if (r.ok) {
    expect(GovernanceConfig.safeParse(r.config).success).toBe(true);
    for (const p of [...r.problems, ...r.warnings]) expect(typeof p.message).toBe("string");
  } else {
    expect(r.problems.length).toBeGreaterThan(0);
    for (const p of r.problems) {
      expect(typeof p.message).toBe("string");
      expect(p.line === null || Number.isInteger(p.line)).toBe(true);
    }
  }
}

const keyish = fc.oneof(
  fc.constantFrom(
    "phase",
    "enforcement",
    "delegation",
    "maxDepth",
    "maxDepht",
    "anchors",
    "agents",
    "resume",
    "minIdle",
    "__proto__",
    "constructor",
    "audit",
    "inject",
    "stop",
  ),
  fc.string({ maxLength: 12 }),
);
const yamlish = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 1 }), tie("object"), fc.array(tie("value"), { maxLength: 4 })),
  object: fc.dictionary(keyish, tie("value"), { maxKeys: 5 }),
}));

describe("config parser (property)", () => {
  it("arbitrary text", () => {
    fc.assert(fc.property(fc.string({ maxLength: 1000 }), check), { numRuns: 500 });
  });

  it("arbitrary YAML documents built from config-like keys", () => {
    fc.assert(
      fc.property(yamlish.object, (doc) => check(stringify(doc))),
      { numRuns: 500 },
    );
  });

  it("the default file with one line replaced or removed", () => {
    const lines = DEFAULT_CONFIG_YAML.split("\n");
    fc.assert(
      fc.property(fc.integer({ min: 0, max: lines.length - 1 }), fc.string({ maxLength: 40 }), (i, replacement) => {
        check([...lines.slice(0, i), replacement, ...lines.slice(i + 1)].join("\n"));
        check([...lines.slice(0, i), ...lines.slice(i + 1)].join("\n"));
      }),
      { numRuns: 300 },
    );
  });

  it("YAML bombs and hostile constructs are typed problems, not hangs or throws", () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x]",
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${"b".repeat(i + 1)}: &${"b".repeat(i + 1)} [${Array(9)
            .fill(i === 0 ? "*a" : `*${"b".repeat(i)}`)
            .join(", ")}]`,
      ),
    ].join("\n");
    for (const text of [bomb, "!!js/function 'return 1'", "? [a]\n: b", "phase: !!binary aGVsbG8=", "\t- x", "x: *undefined", "<<: *a"]) check(text);
  });
});
