import { loadKey, sign, verify } from "../storage/directive-signing.ts";
import type { BudgetRaise } from "../session/budget-state.ts";

/** What is signed for a raise kept in a record: its own domain tag, so no queue directive's signature can pass for one. */
function grantPayload(raise: Omit<BudgetRaise, "sig">): unknown {
  return ["budget-raise/v1", raise.id, raise.at, raise.scope, raise.add, raise.by];
}

/**
 * The raise as a record keeps it, signed with the user's key (directive-signing.ts: it lives outside every project).
 * Called by the plugin after it accepted a signed queue file; undefined when no key is available (fails closed).
 */
export function grantRaise(sessionId: string, raise: Omit<BudgetRaise, "sig">, env: NodeJS.ProcessEnv = process.env): BudgetRaise | undefined {
  const key = loadKey(env);
  if (!key.ok) return undefined;
  return { ...raise, sig: sign(key.key, sessionId, grantPayload(raise)) };
}

const verified = new WeakMap<readonly BudgetRaise[], readonly BudgetRaise[]>();

/**
 * The raises of a record whose signature checks out; the others (hand-written into a record, copied from another
 * session) count for nothing. Memoized by array identity: a record's `raises` array is carried unchanged through
 * every step, so the HMACs run once per record read from disk, not on every tool call.
 */
export function verifiedRaises(sessionId: string, raises: readonly BudgetRaise[], env: NodeJS.ProcessEnv = process.env): readonly BudgetRaise[] {
  if (raises.length === 0) return raises;
  const hit = verified.get(raises);
  if (hit) return hit;
  const key = loadKey(env);
  // Each raise counts once: its id is its nonce, so a genuine entry copied within the record adds nothing.
  const ids = new Set<string>();
  const ok = key.ok ? raises.filter((r) => verify(key.key, sessionId, grantPayload(r), r.sig) && !ids.has(r.id) && ids.add(r.id)) : [];
  verified.set(raises, ok);
  return ok;
}
