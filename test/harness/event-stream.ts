/** One event of the server's bus, as `GET /event` streams it. */
export type BusEvent = { type: string; properties?: Record<string, unknown> };

/**
 * The server's event stream (`GET /event`, SSE): every bus event as JSON, collected until `close`. `onEvent` sees
 * each event as it arrives (a test that must act inside a short window of the host's, e.g. abort right after a
 * step's cost was reported, reacts there instead of polling).
 */
export function listen(url: string, directory: string, onEvent?: (e: BusEvent) => void): { events: BusEvent[]; close: () => void } {
  const events: BusEvent[] = [];
  const ctl = new AbortController();
  void (async () => {
    const u = new URL("/event", url);
    u.searchParams.set("directory", directory);
    const res = await fetch(u, { signal: ctl.signal });
    const reader = res.body?.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) return;
      buf += dec.decode(next.value, { stream: true });
      let i = buf.indexOf("\n\n");
      while (i >= 0) {
        const chunk = buf.slice(0, i);
        buf = buf.slice(i + 2);
        for (const line of chunk.split("\n")) {
          if (!line.startsWith("data: ")) continue;
          const e = JSON.parse(line.slice(6)) as BusEvent;
          events.push(e);
          onEvent?.(e);
        }
        i = buf.indexOf("\n\n");
      }
    }
  })().catch(() => undefined);
  return { events, close: () => ctl.abort() };
}
