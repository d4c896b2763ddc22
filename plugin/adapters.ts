import type { HostLine } from "../governance/host/host-lines.ts";
import { adapter as opencode1 } from "./opencode-1/adapter.ts";
import { adapter as opencode2 } from "./opencode-2/adapter.ts";
import type { HostAdapter } from "./wiring/host-adapter.ts";

/** Any adapter, whatever its host's shapes: what the list below checks each entry against. */
type AnyAdapter = HostAdapter<never, unknown, never, string, never>;

/**
 * The host adapters, one per row of HOST_LINES (governance/host/host-lines.ts): a row without its adapter, or an
 * adapter on another line's key, does not compile. plugin/index.ts enters them; the contract suite
 * (test/host-contract/adapter-contract.test.ts) and test/architecture/host-adapters.test.ts read this list.
 */
export const ADAPTERS = { 1: opencode1, 2: opencode2 } as const satisfies { readonly [L in HostLine]: AnyAdapter & { readonly line: L } };

/** The folder of each adapter under plugin/ (`opencode-<line>`). */
export const adapterFolder = (line: HostLine): string => `opencode-${line}`;
