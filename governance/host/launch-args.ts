/**
 * What OpenCode's own command line says about the session a start brings back: `opencode -s <id>` (`--session`) opens
 * that session, `opencode -c` (`--continue`) the last one. The plugin runs in the process OpenCode started (the TUI's
 * process on OpenCode 1.18), so its argv is the user's command; a start that resumes a session is not told to resume it.
 */
export type LaunchResume = { session: string | null; continues: boolean };

export function launchResume(argv: readonly string[]): LaunchResume {
  let session: string | null = null;
  let continues = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-s" || arg === "--session") session = argv[i + 1] ?? null;
    else if (arg.startsWith("--session=")) session = arg.slice("--session=".length) || null;
    else if (arg === "-c" || arg === "--continue") continues = true;
  }
  return { session, continues };
}
