import * as z from "../zod.ts";

/**
 * OpenCode's own session id (`ses_` + 26 url-safe characters in 1.18). It is the one key for a session
 * everywhere (seed 004): file names, queues, audit lines. The pattern is deliberately strict because the
 * id becomes a file name: no dots, slashes, or anything a shell or a path join could misread.
 */
const SESSION_ID = /^ses_[A-Za-z0-9]{8,64}$/;
export const SessionId = z.string().regex(SESSION_ID, "not an OpenCode session id (ses_…)");
export type SessionId = z.infer<typeof SessionId>;

export function isSessionId(value: unknown): value is SessionId {
  // The schema's own pattern, tested directly: this runs on every event and hook call.
  return typeof value === "string" && SESSION_ID.test(value);
}
