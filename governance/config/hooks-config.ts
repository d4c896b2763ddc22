import * as z from "../zod.ts";
import { AuditEventType } from "../storage/audit-log.ts";
import { Duration } from "./config-schema.ts";

/**
 * The user's own scripts on governance events (issue 44 item 2, docs/hooks.md): `hooks:` in the user's own
 * `~/.config/opencode/governance.yaml` maps an audit event type to a command (the event as JSON on its stdin) or a
 * webhook URL (the event POSTed as JSON). Never read from a project's file: a cloned repository must not run code on
 * the user's machine through governance (config-parse.ts says so when a project's file has the key).
 */

/** A hook's run is killed (a command) or abandoned (a webhook) after its timeout; the default and the most allowed. */
export const HOOK_TIMEOUT = { default: 10_000, max: 60_000 } as const;
/** Actions per event: a list longer than this is a mistake, not a wish (each one is a process or a request per event). */
export const MAX_ACTIONS_PER_EVENT = 5;

const Timeout = Duration.refine((ms) => ms >= 100 && ms <= HOOK_TIMEOUT.max, { message: `a hook's timeout: 100 ms to ${HOOK_TIMEOUT.max / 1000}s` });

/** A command run with `/bin/sh -c` as the user, outside the agents' sandbox: the user's own code. */
export const CommandHook = z.strictObject({ command: z.string().trim().min(1).max(2000), timeout: Timeout.optional() });
/** An http(s) URL; the event is POSTed to it as JSON. The URL may hold a token (chat webhooks do): it is never audited. */
export const WebhookHook = z.strictObject({
  url: z.string().regex(/^https?:\/\/[^\s]+$/, "a hook's url: an http(s) URL such as https://chat.example.com/hooks/…"),
  timeout: Timeout.optional(),
});
export const HookAction = z.union([CommandHook, WebhookHook]);
export type HookAction = z.infer<typeof HookAction>;

/**
 * Which events a hook may name: every audit type but `hook_failed` — a failing hook on the failure of hooks would
 * feed itself.
 */
export const HookEvent = AuditEventType.exclude(["hook_failed"]);
export type HookEvent = z.infer<typeof HookEvent>;

/** `event: action` or `event: [action, …]`; always a list after parsing. */
export const HooksConfig = z.partialRecord(
  HookEvent,
  z.union([HookAction, z.array(HookAction).min(1).max(MAX_ACTIONS_PER_EVENT)]).transform((a): HookAction[] => (Array.isArray(a) ? a : [a])),
);
export type HooksConfig = z.infer<typeof HooksConfig>;

/** What a project's file gets told when it says `hooks:` (config-parse.ts). */
export const PROJECT_HOOKS_IGNORED =
  'key "hooks" is ignored in a project\'s governance.yaml: hooks run commands on your machine, so governance reads them only from your own ~/.config/opencode/governance.yaml (docs/hooks.md)';
