/**
 * A host call bounded in time that never throws: the answer, or `undefined` when it failed or took longer than `ms`.
 * Governance must keep working (and the user's session must go on) when the server is busy or a call fails.
 */
export async function settle<T>(p: Promise<T>, ms = 5_000): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
