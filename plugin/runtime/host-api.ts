/**
 * The port the plugin's effects run through: what governance asks of its host (abort, status, who a parent is, a
 * toast). Each adapter implements it over its own host: plugin/opencode-1/api.ts (the SDK client),
 * plugin/opencode-2/api.ts (`ctx.session`). Every call is bounded and returns a value instead of throwing:
 * governance must keep working (and the user's session must go on) when the server is busy or a call fails.
 */
export type HostApi = {
  abort(sessionId: string): Promise<boolean>;
  /** Busy/retry sessions by id; idle sessions are absent (1.18 omits them). `undefined` when the call failed. */
  status(): Promise<Record<string, string> | undefined>;
  parentOf(sessionId: string): Promise<{ parentId: string | null; agent: string | null } | undefined>;
  toast(message: string, variant: "info" | "warning" | "error"): Promise<void>;
};
