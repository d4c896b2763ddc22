import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { pluginFixture, settle } from "../plugin/fixture.ts";

/** Issue 8 §1/§4: a store problem reaches the user as one toast, even when the audit log itself is what failed. */
describe("store problems are shown once as a toast", () => {
  it("audit.log swapped for a symlink: one warning toast naming it, the victim untouched", async () => {
    const f = await pluginFixture();
    const victim = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-victim-"));
    try {
      fs.writeFileSync(path.join(victim, "bashrc"), "original\n");
      const log = path.join(f.dir, ".opencode", "governance", "audit.log");
      fs.rmSync(log);
      fs.symlinkSync(path.join(victim, "bashrc"), log);
      for (let i = 0; i < 3; i++) await f.rt.ctx.record("hook_error", { hook: "test", message: "x" });
      await settle();
      const toasts = f.calls.toasts.filter((t) => t.message.includes("audit.log"));
      expect(toasts).toEqual([{ message: expect.stringMatching(/^Governance cannot use .*audit\.log: .*refused .*symbolic link/), variant: "warning" }]);
      expect(fs.readFileSync(path.join(victim, "bashrc"), "utf8")).toBe("original\n");
    } finally {
      fs.rmSync(victim, { recursive: true, force: true });
      await f.close();
    }
  });
});
