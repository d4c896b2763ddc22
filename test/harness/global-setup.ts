import { ensureOpencodeBinary, ensureWarmDeps } from "./warm-cache.ts";

/** Runs once before the suite: the real opencode binary works, and its plugin dependencies are warm. */
export default async function setup(): Promise<void> {
  ensureOpencodeBinary();
  ensureWarmDeps();
}
