import type { PluginInput } from "@opencode-ai/plugin";
import { settle } from "./settle.ts";

/**
 * The one layer that talks to OpenCode's SDK client. Every call is bounded and returns a value instead of throwing:
 * governance must keep working (and the user's session must go on) when the server is busy or a call fails.
 */
export type OpencodeApi = {
  abort(sessionId: string): Promise<boolean>;
  /** Busy/retry sessions by id; idle sessions are absent (1.18 omits them). `undefined` when the call failed. */
  status(): Promise<Record<string, string> | undefined>;
  parentOf(sessionId: string): Promise<{ parentId: string | null; agent: string | null } | undefined>;
  toast(message: string, variant: "info" | "warning" | "error"): Promise<void>;
};

type Client = PluginInput["client"];

export function createOpencodeApi(client: Client, directory: string): OpencodeApi {
  const query = { directory };
  return {
    async abort(sessionId) {
      const res = await settle(client.session.abort({ path: { id: sessionId }, query }));
      return Boolean(res && !("error" in res && res.error));
    },
    async status() {
      const res = await settle(client.session.status({ query }));
      const data = res && "data" in res ? (res.data as Record<string, { type: string }> | undefined) : undefined;
      if (!data) return undefined;
      return Object.fromEntries(Object.entries(data).map(([id, s]) => [id, s.type]));
    },
    async parentOf(sessionId) {
      const res = await settle(client.session.get({ path: { id: sessionId }, query }));
      const data = res && "data" in res ? (res.data as { parentID?: string; agent?: string } | undefined) : undefined;
      if (!data) return undefined;
      return { parentId: data.parentID ?? null, agent: data.agent ?? null };
    },
    async toast(message, variant) {
      await settle(client.tui.showToast({ body: { message, variant, title: "opencode-governance" } }), 2_000);
    },
  };
}
