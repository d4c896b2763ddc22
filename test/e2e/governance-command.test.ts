/**
 * What `/governance` (commands/governance.md, copied into `.opencode/command/` by `init`) costs on the real OpenCode 1
 * binary (issue 39). OpenCode 1.18.33 runs a command as a prompt: the template (its `!` shell substitution already run)
 * becomes the user message and the session's model answers — `command.execute.before` may rewrite the parts in place
 * but has no way to skip the reply (the prompt is sent without `noReply`). So the command costs one model request in
 * the session it is run in, and opens no session of its own; docs/user-guide.md says so. If a later OpenCode lets a
 * command answer without a model, this test fails and the command should use it.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { e2eHost, REPO_ROOT, serveOpencode } from "../harness/index.ts";

describe("/governance on the real binary", () => {
  const { model, project } = e2eHost({ respond: () => ({ text: "Here is the tree." }), agents: true, serve: false });
  beforeAll(async () => {
    const commands = path.join(project.dir, ".opencode", "command");
    fs.mkdirSync(commands, { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, "commands", "governance.md"), path.join(commands, "governance.md"));
  });

  test("one model request in the session it runs in, no new session; the tree reaches the model as the command's text", async () => {
    const serve = await serveOpencode(project);
    try {
      const session = await serve.http.createSession();
      const sessionsBefore = await fetch(new URL(`/session?directory=${encodeURIComponent(project.dir)}`, serve.url)).then(
        (r) => r.json() as Promise<unknown[]>,
      );
      const before = model.requests.filter((r) => r.kind === "agent").length;
      const res = await fetch(new URL(`/session/${session.id}/command?directory=${encodeURIComponent(project.dir)}`, serve.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ command: "governance", arguments: "" }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const requests = model.requests.filter((r) => r.kind === "agent").slice(before);
      expect(requests.map((r) => r.sessionId)).toEqual([session.id]);
      expect(JSON.stringify(requests[0]?.messages)).toContain("The governance session tree of this project");
      const sessionsAfter = await fetch(new URL(`/session?directory=${encodeURIComponent(project.dir)}`, serve.url)).then(
        (r) => r.json() as Promise<unknown[]>,
      );
      expect(sessionsAfter.length).toBe(sessionsBefore.length);

      // OpenCode's shell mode (`!` in the TUI) runs a command and shows its output with no model request: the free
      // way to look, which docs/user-guide.md recommends.
      const beforeShell = model.requests.filter((r) => r.kind === "agent").length;
      const shell = await fetch(new URL(`/session/${session.id}/shell?directory=${encodeURIComponent(project.dir)}`, serve.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ agent: "build", command: "echo governance-tree" }),
      });
      expect(shell.status, await shell.clone().text()).toBe(200);
      expect(JSON.stringify(await shell.json())).toContain("governance-tree");
      await new Promise((r) => setTimeout(r, 1_000));
      expect(model.requests.filter((r) => r.kind === "agent").length).toBe(beforeShell);
    } finally {
      await serve.stop();
    }
  });
});
