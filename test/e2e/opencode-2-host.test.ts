/**
 * OpenCode 2 on the real host. This registry has no OpenCode 2 binary (`npm view @opencode/cli` → 404), so by default
 * this file only says what it skipped. With one:
 *   OPENCODE_BIN=/path/to/opencode npx vitest run test/e2e/opencode-2-host.test.ts test/e2e/governance-prefix.test.ts
 * runs the smoke scenario (test/compat/host-smoke.test.ts) and the prefix file on it; the harness writes `plugins`
 * and `experimental.subagent_depth` for OpenCode 2 (test/harness/host-under-test.ts). Until then OpenCode 2 is proven
 * against its pinned contract only: test/host-contract/opencode-2-scenarios.test.ts.
 */
import { describe, test } from "vitest";
import { hostUnderTest } from "../harness/host-under-test.ts";

const host = hostUnderTest();

if (host.line === 2) {
  await import("../compat/host-smoke.test.ts");
} else {
  describe("OpenCode 2, real host", () => {
    test.skip(`SKIPPED: no OpenCode 2 binary (OPENCODE_BIN is OpenCode ${host.version}); run with OPENCODE_BIN=<opencode 2> to prove it on the real host`, () => {});
  });
}
