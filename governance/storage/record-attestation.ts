import { createHmac, timingSafeEqual } from "node:crypto";
import { loadKey } from "./directive-signing.ts";

/**
 * Planted records (issue 20 §3). A repository can force-add files under the git-ignored state folder, so a record
 * on disk proves nothing by itself. A record the plugin creates because OpenCode showed it the session (`created`,
 * or a first activity) carries an *attestation*: `HMAC-SHA256(per-user key, domain ‖ session id)`, the key being the
 * one that signs queue files (outside every project). A planted or copied-in record cannot carry a valid one, so
 * readers (`sessions`, `status`, the dashboard, the `governance` tool, `stop`/`inject` targets) never list it as
 * running, never stop it by agent name, and count it instead of showing it among the user's sessions.
 *
 * Records written by builds before attestations existed have none: they read as unverified until OpenCode shows
 * their session again (its first activity in a process attests it). No usable key: nothing can be checked, every
 * record is taken as it is and `problem` says why (the same key failure already stops stop/inject from signing).
 */

const DOMAIN = "opencode-governance/record/v1";
const ATTESTATION = /^[0-9a-f]{64}$/;

export function recordAttestation(key: Buffer, sessionId: string): string {
  return createHmac("sha256", key).update(`${DOMAIN}\0${sessionId}`).digest("hex");
}

export type RecordTrust = {
  /** Why records cannot be checked (no usable key), else null. */
  readonly problem: string | null;
  /** The attestation for a session OpenCode showed this process, or undefined without a key. */
  attest(sessionId: string): string | undefined;
  /** True when the record's attestation is this user's (or nothing can be checked). */
  verified(record: { sessionId: string; attest?: string | null | undefined }): boolean;
};

export function trustFromKey(key: Buffer | undefined, problem: string | null = null): RecordTrust {
  return {
    problem: key ? null : (problem ?? "no signing key"),
    attest: (sessionId) => (key ? recordAttestation(key, sessionId) : undefined),
    verified(record) {
      if (!key) return true;
      const a = record.attest;
      if (typeof a !== "string" || !ATTESTATION.test(a)) return false;
      return timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(recordAttestation(key, record.sessionId), "hex"));
    },
  };
}

/** This user's record trust, from the per-user key (created on first use). Never throws. */
export function recordTrust(env: NodeJS.ProcessEnv = process.env): RecordTrust {
  const key = loadKey(env);
  return key.ok ? trustFromKey(key.key) : trustFromKey(undefined, key.reason);
}

/** Records split into those this user's governance wrote and the rest (planted, copied in, or from an older build). */
export function splitByTrust<R extends { sessionId: string; attest?: string | null | undefined }>(
  records: readonly R[],
  trust: RecordTrust,
): { trusted: R[]; unverified: R[] } {
  const trusted: R[] = [];
  const unverified: R[] = [];
  for (const r of records) (trust.verified(r) ? trusted : unverified).push(r);
  return { trusted, unverified };
}
