/**
 * TEST-ONLY switch, read once when an instance starts: `OPENCODE_GOVERNANCE_TEST_SKIP_HOOKS=prefix` leaves the prefix
 * out (OpenCode 1: `experimental.chat.system.transform` unregistered; OpenCode 2: the `context` hook adds no prefix),
 * which is what a host update that stops calling that hook looks like. It exists so the end-to-end tests can prove
 * governance notices (test/e2e/governance-gap.test.ts, test/e2e/opencode-2-observe.test.ts); a user has no reason to
 * set it, and doing so turns governance's first promise off. On OpenCode 2, `execute.before` leaves the tool gate
 * unregistered too, so the end-to-end test proves a spawn is still refused before its session exists
 * (test/e2e/opencode-2-spawn-permission.test.ts). `shell.env` (OpenCode 1) and `create.before` (OpenCode 2) leave the
 * shell's entry into the sandbox out, as a host that stops passing the call there: governance says so and falls back
 * (test/e2e/confinement.test.ts).
 */
export function testSkippedHooks(env: NodeJS.ProcessEnv): ReadonlySet<string> {
  return new Set((env.OPENCODE_GOVERNANCE_TEST_SKIP_HOOKS ?? "").split(",").filter((s) => s !== ""));
}
