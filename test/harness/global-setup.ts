import { ensureOpencode2 } from "./opencode-2-binary.ts";
import { ensureOpencodeBinary, ensureWarmDeps } from "./warm-cache.ts";

/** Runs once before the suite: the real opencode binaries work (OpenCode 1 pinned, OpenCode 2 fetched), and OpenCode 1's plugin dependencies are warm. */
export default async function setup(): Promise<void> {
  ensureOpencodeBinary();
  ensureWarmDeps();
  // `npx vitest run` without npm test's pretest: the OpenCode 2 binary is fetched here the first time (never fails the
  // run: the OpenCode 2 file is skipped with the reason).
  ensureOpencode2();
}
