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
  /** A line for the user; `sessionId` is the session it is about (OpenCode 2's TUI offers to open it). */
  toast(message: string, variant: "info" | "warning" | "error", sessionId?: string): Promise<void>;
  /**
   * The name this host offers for a tool the core names (records keep the core's `bash`/`task`; OpenCode 2 offers
   * `shell`/`subagent`): every text a model reads names tools as it can call them. Absent: the core's name.
   */
  toolName?(coreTool: string): string;
};

/** A record's last tool call as this host names it (for the texts that quote it). */
export function hostNamed<T extends { tool: string }>(api: HostApi, call: T): T;
export function hostNamed<T extends { tool: string }>(api: HostApi, call: T | null | undefined): T | null | undefined;
export function hostNamed<T extends { tool: string }>(api: HostApi, call: T | null | undefined): T | null | undefined {
  return call && api.toolName ? { ...call, tool: api.toolName(call.tool) } : call;
}
