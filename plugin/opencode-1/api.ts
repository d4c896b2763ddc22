import type { PluginInput } from "@opencode-ai/plugin";
import type { HostApi } from "../runtime/host-api.ts";
import { settle } from "../runtime/settle.ts";

type Client = PluginInput["client"];

/** OpenCode 1's SDK client (`input.client`) as the port every effect runs through (plugin/runtime/host-api.ts). */
export function createHostApi(client: Client, directory: string): HostApi {
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
