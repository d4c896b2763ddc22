import path from "node:path";
import type { V2Context } from "./types.ts";

/**
 * OpenCode 2 loads one plugin instance per location, but `ctx.event.subscribe()` is one global stream across all
 * locations, and `session.execution.*` events carry no location. A session belongs to this instance when its
 * location's directory is this instance's: learned from `session.created` (which carries it), else asked once with
 * `session.get` and cached. Without `ctx.location` (a host that does not give it) nothing is filtered.
 */
export class LocationFilter {
  readonly #dir: string | undefined;
  readonly #known = new Map<string, boolean>();
  readonly #asking = new Map<string, Promise<boolean | undefined>>();
  readonly #get: V2Context["session"]["get"];

  constructor(directory: string | undefined, get: V2Context["session"]["get"]) {
    this.#dir = directory === undefined ? undefined : path.resolve(directory);
    this.#get = get;
  }

  #same(directory: string | undefined): boolean {
    return directory !== undefined && path.resolve(directory) === this.#dir;
  }

  /** An event that names its location (session.created): remembered without a lookup. */
  learn(sessionId: string, directory: string | undefined): void {
    if (this.#dir === undefined || directory === undefined) return;
    this.#known.set(sessionId, this.#same(directory));
  }

  /**
   * Whether the session is this location's. `unknown` is the answer when the host cannot tell (lookup failed): false
   * for the global event stream (another instance may own it), true inside a hook the host called on this instance.
   */
  async mine(sessionId: string, unknown: boolean): Promise<boolean> {
    if (this.#dir === undefined) return true;
    const known = this.#known.get(sessionId);
    if (known !== undefined) return known;
    let asking = this.#asking.get(sessionId);
    if (!asking) {
      asking = this.#lookup(sessionId);
      this.#asking.set(sessionId, asking);
    }
    const answer = await asking;
    return answer ?? unknown;
  }

  async #lookup(sessionId: string): Promise<boolean | undefined> {
    try {
      const info = await this.#get({ sessionID: sessionId });
      const mine = this.#same(info?.location?.directory);
      this.#known.set(sessionId, mine);
      return mine;
    } catch {
      return undefined;
    } finally {
      this.#asking.delete(sessionId);
    }
  }
}
