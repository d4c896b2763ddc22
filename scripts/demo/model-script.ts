import { lastOf, textOf, type ModelRequest, type Reply } from "../../test/harness/index.ts";

/**
 * What the scripted model does, decided from the request alone. Each session is told what to play by the marker of
 * its turn's prompt (see {@link turnPrompt}): the demo's own prompt for a root session, or the `task` prompt its parent
 * sent for a child. Request counts are never used: OpenCode's housekeeping could shift them.
 */
export const MARK = {
  prefix: "[demo:prefix]",
  chain: "[demo:chain]",
  chainHigh: "[demo:chain-high]",
  chainExec: "[demo:chain-exec]",
  chainVerify: "[demo:chain-verify]",
  chainValidate: "[demo:chain-validate]",
  leaf: "[demo:leaf]",
  leafExec: "[demo:leaf-exec]",
  leafBuilder: "[demo:leaf-builder]",
  leafGeneral: "[demo:leaf-general]",
  stop: "[demo:stop]",
  loop: "[demo:loop]",
  afterCompact: "[demo:after-compact]",
  escape: "[demo:escape]",
  escapeChild: "[demo:escape-child]",
  resume: "[demo:resume]",
  runaway: "[demo:runaway]",
  runawayChild: "[demo:runaway-child]",
  pingPong: "[demo:ping-pong]",
  pingPongChild: "[demo:ping-pong-child]",
} as const;

/** Safety cap for the looping child if the stop never lands. */
export const LOOP_CAP = 60;

/**
 * A demo prompt names its part on a line of its own start: `[demo:chain] Review the README.` (a child's task prompt has
 * governance's `<governance-context>` block above that line). Only such a message starts a turn: the status note
 * governance appends after the last message, or any other text it adds, is not the user speaking, even when it quotes
 * a prompt.
 */
const MARKER_LINE = /^\[demo:[a-z-]+\]/m;

/** Index of the message that started this turn: the last user message with a marker line; -1 when there is none. */
function turnStart(req: ModelRequest): number {
  return req.messages.findLastIndex((m) => m.role === "user" && MARKER_LINE.test(textOf(m.content)));
}

/** The prompt this turn answers (the demo's prompt, or the child's task prompt); "" when none carries a marker. */
export function turnPrompt(req: ModelRequest): string {
  const i = turnStart(req);
  return i < 0 ? "" : textOf(req.messages[i]!.content);
}

/** The part this turn plays: the marker its prompt's marker line starts with (a marker quoted elsewhere does not count). */
export function turnMarker(req: ModelRequest): string | undefined {
  return MARKER_LINE.exec(turnPrompt(req))?.[0];
}

/** Tool results since the prompt of this turn: how far this turn has got. */
export function toolResultsThisTurn(req: ModelRequest): number {
  return req.messages.slice(turnStart(req) + 1).filter((m) => m.role === "tool").length;
}

/** Every tool result text of the request, oldest first. */
export function toolResults(req: ModelRequest): string[] {
  return req.messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
}

const task = (subagent_type: string, description: string, prompt: string): Reply => ({
  toolCalls: [{ name: "task", args: { subagent_type, description, prompt } }],
});

/** Delegates once, then reports what the child returned. */
function delegateOnce(req: ModelRequest, target: string, description: string, prompt: string, done: string): Reply {
  return toolResultsThisTurn(req) === 0 ? task(target, description, prompt) : { text: done };
}

export function respond(req: ModelRequest): Reply {
  if (req.kind === "compaction")
    return { text: "## Objective\n- Demo project: inspect README, delegate checks.\n## Progress\n- Delegation chain ran; verifier hit the depth limit." };
  const marker = turnMarker(req);
  const done = toolResultsThisTurn(req);
  const has = (m: string) => marker === m;

  // Children first: their prompt carries only their own marker.
  if (has(MARK.loop)) {
    const last = lastOf(req, "tool") ?? "";
    if (last.includes("SESSION TERMINATED") || done >= LOOP_CAP) return { text: "Stopped. I read README.md in slices; the check is unfinished." };
    // Varying the arguments keeps OpenCode's doom-loop guard (3 identical calls) out of the way.
    return { toolCalls: [{ name: "read", args: { filePath: "README.md", limit: 10 + done } }], delayMs: 60 };
  }
  if (has(MARK.runawayChild)) {
    // Never done on its own: only its budget ends it. New arguments each time, so it is not a loop.
    const last = lastOf(req, "tool") ?? "";
    if (last.includes("SESSION TERMINATED") || done >= LOOP_CAP) return { text: "Planner: stopped before the plan was finished." };
    return { toolCalls: [{ name: "read", args: { filePath: "README.md", offset: 1 + done, limit: 5 } }], delayMs: 40 };
  }
  if (has(MARK.pingPongChild)) {
    // A-B-A-B with unchanged results: no progress, which the loop guard recognises.
    const last = lastOf(req, "tool") ?? "";
    if (last.includes("SESSION TERMINATED") || done >= LOOP_CAP) return { text: "Verifier: stopped while re-reading the same two files." };
    return { toolCalls: [{ name: "read", args: { filePath: done % 2 === 0 ? "README.md" : "docs/notes.md" } }], delayMs: 40 };
  }
  if (has(MARK.escapeChild)) return done === 0 ? { toolCalls: [{ name: "read", args: { filePath: "README.md" } }] } : { hang: true };
  if (has(MARK.chainValidate)) return { text: "validated" };
  if (has(MARK.chainVerify)) {
    return delegateOnce(
      req,
      "governance-validator",
      "detail checks",
      `${MARK.chainValidate} Check the README line by line.`,
      "Verifier: delegation was halted at the depth limit; I checked the README myself. It is fine.",
    );
  }
  if (has(MARK.chainExec)) {
    return delegateOnce(
      req,
      "governance-verifier",
      "verify the step",
      `${MARK.chainVerify} Verify that the README is accurate.`,
      "Executor: step done and verified.",
    );
  }
  if (has(MARK.chainHigh)) {
    return delegateOnce(
      req,
      "governance-executor",
      "execute the step",
      `${MARK.chainExec} Execute: review the README.`,
      "High: the objective was executed and verified.",
    );
  }
  if (has(MARK.leafBuilder)) {
    return delegateOnce(
      req,
      "governance-validator",
      "check my change",
      `${MARK.chainValidate} Check my change.`,
      "Builder: could not delegate, so I did the check myself.",
    );
  }
  if (has(MARK.leafGeneral)) {
    return delegateOnce(req, "explore", "look for usages", `${MARK.chainValidate} Find usages.`, "General: could not delegate, so I searched myself.");
  }
  if (has(MARK.leafExec)) {
    return delegateOnce(
      req,
      "governance-builder",
      "build the change",
      `${MARK.leafBuilder} Make the change, then have it checked.`,
      "Executor: the builder finished.",
    );
  }

  // Root sessions (the governance-coordinator).
  if (has(MARK.prefix)) {
    if (done === 0) return { toolCalls: [{ name: "read", args: { filePath: "README.md" } }] };
    // Only `read`: OpenCode's glob/grep/list fetch ripgrep from GitHub on first use, and the demo stays offline.
    if (done === 1) return { toolCalls: [{ name: "read", args: { filePath: "docs/notes.md" } }] };
    return { text: "The project has a README; next I will delegate a review." };
  }
  if (has(MARK.chain))
    return delegateOnce(req, "governance-high", "review objective", `${MARK.chainHigh} Objective: review the README.`, "Coordinator: the review is done.");
  if (has(MARK.leaf)) {
    // Two delegations in one step (OpenCode runs them side by side): one reaches the builder, one the general agent.
    if (done > 0) return { text: "Coordinator: the change is done." };
    return {
      toolCalls: [
        { name: "task", args: { subagent_type: "governance-executor", description: "small change", prompt: `${MARK.leafExec} Make a small change.` } },
        { name: "task", args: { subagent_type: "general", description: "find usages", prompt: `${MARK.leafGeneral} Find where the README is used.` } },
      ],
    };
  }
  if (has(MARK.stop))
    return delegateOnce(
      req,
      "governance-executor",
      "long check",
      `${MARK.loop} Read the README in slices, over and over.`,
      "Coordinator: my subagent was stopped; I will check what it left before going on.",
    );
  if (has(MARK.escape))
    return delegateOnce(req, "governance-planner", "plan the release", `${MARK.escapeChild} Plan the release.`, "Coordinator: plan received.");
  if (has(MARK.runaway))
    return delegateOnce(
      req,
      "governance-planner",
      "plan the release notes",
      `${MARK.runawayChild} Plan the release notes.`,
      "Coordinator: the planner hit its budget.",
    );
  if (has(MARK.pingPong))
    return delegateOnce(
      req,
      "governance-verifier",
      "verify the docs",
      `${MARK.pingPongChild} Verify the docs agree.`,
      "Coordinator: the verifier was looping.",
    );
  if (has(MARK.resume)) return { text: "Resuming: the planner was interrupted; I will check its work first." };
  if (has(MARK.afterCompact)) return { text: "Continuing after compaction." };
  return { text: "ok" };
}
