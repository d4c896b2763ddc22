import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { transition } from "../../../governance/session/session-machine.ts";
import { recordAttestation, splitByTrust, trustFromKey } from "../../../governance/storage/record-attestation.ts";
import { makeRecord, ROOT_ID, T0 } from "../fixtures/records.ts";

const KEY = randomBytes(32);
const trust = trustFromKey(KEY);
const ctx = { config: { minIdleMs: 3_600_000, maxIdleMs: 48 * 3_600_000 }, sessionId: ROOT_ID };

describe("record attestation (issue 20 §3)", () => {
  it("only this user's key attests a session id; a copied attestation does not fit another id", () => {
    const a = trust.attest(ROOT_ID)!;
    expect(a).toBe(recordAttestation(KEY, ROOT_ID));
    expect(trust.verified({ sessionId: ROOT_ID, attest: a })).toBe(true);
    expect(trust.verified({ sessionId: "ses_other00000000000000000001", attest: a })).toBe(false);
    expect(trust.verified({ sessionId: ROOT_ID, attest: recordAttestation(randomBytes(32), ROOT_ID) })).toBe(false);
    for (const attest of [undefined, null, "", "zz", a.toUpperCase()]) expect(trust.verified({ sessionId: ROOT_ID, attest })).toBe(false);
  });

  it("without a usable key nothing can be checked: every record is taken, and why is said", () => {
    const none = trustFromKey(undefined, "signing key …: not owned by this user; refused");
    expect(none.verified({ sessionId: ROOT_ID })).toBe(true);
    expect(none.attest(ROOT_ID)).toBeUndefined();
    expect(none.problem).toMatch(/not owned by this user/);
  });

  it("splits records into the user's and the rest", () => {
    const mine = makeRecord({ attest: trust.attest(ROOT_ID) ?? null });
    const planted = makeRecord({ sessionId: "ses_planted000000000000000001" });
    expect(splitByTrust([mine, planted], trust)).toEqual({ trusted: [mine], unverified: [planted] });
  });

  it("the core keeps the attestation the adapter gives: at creation, and on the first activity of an older record", () => {
    const attest = trust.attest(ROOT_ID)!;
    const made = transition(undefined, { type: "created", at: T0, parentId: null, agent: "build", attest }, ctx).next;
    expect(made?.attest).toBe(attest);
    const older = makeRecord({ lastActivityAt: T0 });
    const seen = transition(older, { type: "first_seen", at: T0 + 1_000, agent: "build", attest }, ctx).next;
    expect(seen?.attest).toBe(attest);
    // A later event without one keeps it.
    expect(transition(seen, { type: "prompt", at: T0 + 2_000 }, ctx).next?.attest).toBe(attest);
  });
});
