import type { HookAction, HooksConfig } from "../governance/config/hooks-config.ts";
import { cleanLine } from "../governance/text-safety/untrusted-text.ts";

/**
 * How `status --explain` and `doctor` name the user's own hooks (docs/hooks.md). Only the command's program and the
 * webhook's host: a command line may carry a token (`curl -H "Authorization: …"`) and a chat webhook's URL IS its
 * secret, and what these commands print ends up in terminals, bug reports and CI logs.
 */
export const HOOKS_SHOWN_WHY = "the program and the webhook's host only: the rest of a command or URL may carry a secret";

/** One action as shown: `command notify-send …` (first word, without its folder and any `NAME=value` before it) or `webhook chat.example.com`. */
export function hookActionText(action: HookAction): string {
  if ("url" in action) {
    let host = "?";
    try {
      host = new URL(action.url).host;
    } catch {
      // The config schema refused a bad URL already; "?" says nothing of it either way.
    }
    return `webhook ${cleanLine(host, 80)}`;
  }
  const words = action.command.trim().split(/\s+/);
  const program = words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) ?? "";
  const name = program.split("/").pop() ?? "";
  return `command ${cleanLine(name, 40) || "?"}${words.length > 1 || name !== program ? " …" : ""}`;
}

/** Every event with hooks and what it runs, in the file's order: `session_stopped → command notify-send …, webhook chat.example.com`. */
export function hookLines(hooks: HooksConfig): string[] {
  return Object.entries(hooks)
    .filter(([, actions]) => (actions?.length ?? 0) > 0)
    .map(([event, actions]) => `${event} → ${(actions ?? []).map(hookActionText).join(", ")}`);
}

/** `4 actions on 3 events`, or null when the user's file has no hooks. */
export function hookCount(hooks: HooksConfig): string | null {
  const lists = Object.values(hooks).filter((a) => (a?.length ?? 0) > 0);
  const actions = lists.reduce((n, a) => n + (a?.length ?? 0), 0);
  if (actions === 0) return null;
  return `${actions} action${actions === 1 ? "" : "s"} on ${lists.length} event${lists.length === 1 ? "" : "s"}`;
}
