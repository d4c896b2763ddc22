import type { ModelRequest } from "../../test/harness/index.ts";

/**
 * What a provider's prompt cache sees (issue 16). A request is billed as a prefix: tools, then system, then messages.
 * Against the previous request of the same session, the bytes from the first one that differs to the end are the
 * bytes a provider bills again (at full or cache-write price); a request that only appends re-bills only what it adds.
 */
export type CacheFigures = {
  /** Requests compared (each session's first request has nothing to compare with). */
  compared: number;
  /** Compared requests whose system prompt or tool list differs from the previous one of the same session. */
  prefixChanges: number;
  /** Bytes after the first changed byte, summed over the compared requests. */
  rebilledBytes: number;
  /** Size of the compared requests (tools + system + messages), summed. */
  requestBytes: number;
};

/** The request in the order a provider caches it. */
function serialized(req: ModelRequest): string {
  const tools = JSON.stringify(req.body.tools ?? []);
  const messages = req.messages.filter((m) => m.role !== "system").map((m) => JSON.stringify(m));
  return [tools, req.system, ...messages].join("\n");
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

export function cacheFigures(requests: readonly ModelRequest[]): CacheFigures {
  const last = new Map<string, { text: string; req: ModelRequest }>();
  const out: CacheFigures = { compared: 0, prefixChanges: 0, rebilledBytes: 0, requestBytes: 0 };
  for (const req of requests) {
    if (req.kind !== "agent" || !req.sessionId) continue;
    const text = serialized(req);
    const prev = last.get(req.sessionId);
    last.set(req.sessionId, { text, req });
    if (!prev) continue;
    out.compared++;
    if (prev.req.system !== req.system || prev.req.tools.join() !== req.tools.join()) out.prefixChanges++;
    out.rebilledBytes += Buffer.byteLength(text.slice(commonPrefix(prev.text, text)));
    out.requestBytes += Buffer.byteLength(text);
  }
  return out;
}
