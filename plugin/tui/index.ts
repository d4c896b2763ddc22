import { governancePaths } from "../../governance/storage/governance-paths.ts";
import { type Notice, NoticeFollower } from "./notice-follower.ts";

/**
 * The part of OpenCode 2's TUI plugin API this entry uses (2.0.15, read from the binary: the `api` its loader hands to
 * `setup`). `ui.toast.show` with a `sessionID` adds an "Open" action that navigates to that session whenever the user is
 * looking at another session tree (docs/decisions/0059-opencode-2-tui-toasts.md).
 */
export type TuiToast = { title?: string; message: string; variant?: "info" | "success" | "warning" | "error"; duration?: number; sessionID?: string };
export type TuiApi = { location?: { directory?: string }; ui: { toast: { show(toast: TuiToast): void } } };

/** How often the audit log is looked at: a notice shows within this of the decision. */
export const POLL_MS = 400;
/** A toast stays this long (OpenCode's default is 5 s; a blocked delegation deserves time to read and act on). */
const TOAST_MS = 8_000;

/**
 * OpenCode 2's TUI entry (`exports["./tui"]`, and `tui.js` at the package root for a package directory in `plugins`):
 * the toasts governance shows on OpenCode 1 — a blocked delegation, a budget stop, a gap, a stopped subagent — shown
 * in OpenCode 2's TUI. The server plugin has no toast there, so it writes each as a `host_notice` audit line
 * (plugin/opencode-2/api.ts); this entry follows the project's audit log and shows each new one, with the session it
 * is about to open. It decides nothing: every text is the server plugin's. Returns the cleanup the TUI calls on unload.
 */
export async function setup(api: TuiApi): Promise<() => void> {
  const directory = api.location?.directory ?? process.cwd();
  const show = (n: Notice) => {
    try {
      api.ui.toast.show({
        title: "Governance",
        message: n.message,
        variant: n.variant,
        duration: TOAST_MS,
        ...(n.sessionId ? { sessionID: n.sessionId } : {}),
      });
    } catch {
      // The TUI must go on whatever a toast does.
    }
  };
  const follower = new NoticeFollower(governancePaths(directory).auditLog, show);
  await follower.start();
  const timer = setInterval(() => void follower.poll(), POLL_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}

export default { id: "opencode-governance", setup };
