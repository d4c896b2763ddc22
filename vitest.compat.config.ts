import { defineConfig } from "vitest/config";

/** `npm run test:compat`: the smoke scenario on one OpenCode binary (OPENCODE_BIN), run by scripts/compat-matrix.ts. */
export default defineConfig({
  test: {
    include: ["test/compat/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["test/harness/global-setup.ts"],
  },
});
