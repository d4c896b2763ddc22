import { describe, expect, it } from "vitest";
import { printable, redactSecrets, stripControls } from "../../../governance/text-safety/text-hygiene.ts";
import { toolCallSummary } from "../../../governance/session/tool-call-summary.ts";

describe("terminal hygiene (issue 8 §6)", () => {
  it("strips C0/C1 controls and whole escape sequences, keeps newlines and tabs unless asked", () => {
    expect(stripControls("a\u001b[2J\u001b]0;title\u0007b\u0007c\u009b31md\u0085e")).toBe("abcd\ne");
    expect(stripControls("a\tb\nc", { keepNewlines: false })).toBe("a b c");
    expect(printable("x\u202Ey\u200Bz\u00A0w")).toBe("xyz w");
  });
});

describe("secret redaction (issue 8 §6)", () => {
  it.each([
    ["curl -H 'Authorization: Bearer sk-live-abcdefghijklmnop123456' https://api", "curl -H 'Authorization: Bearer [redacted]' https://api"],
    ["export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "export OPENAI_API_KEY=[redacted]"],
    ["git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y", "git clone https://[redacted]@github.com/x/y"],
    ["gh auth login --with-token github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "gh auth login --with-token [redacted]"],
    ["aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "aws configure set aws_access_key_id [redacted]"],
    ["mysql -u root password=hunter22 db", "mysql -u root password=[redacted] db"],
    ["curl 'https://x?api_key=abc123def456&q=1'", "curl 'https://x?api_key=[redacted]&q=1'"],
    ["psql postgres://admin:s3cretpw@db:5432/app", "psql postgres://admin:[redacted]@db:5432/app"],
  ])("%j", (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it("leaves commit hashes, UUIDs and ordinary words alone", () => {
    const text = "git show 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 and 123e4567-e89b-12d3-a456-426614174000, the password field";
    expect(redactSecrets(text)).toBe(text);
  });
});

describe("toolCallSummary: what the record keeps of a tool call", () => {
  it("is clean at the source: no escape sequences, no BEL, secrets redacted before the 120-character clip", () => {
    const command = `${"x".repeat(100)} \u001b[31m\u0007curl -H "Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz0123"`;
    const summary = toolCallSummary("bash", { command });
    expect(summary).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(summary).not.toContain("sk-abc");
    expect(Array.from(summary).length).toBeLessThanOrEqual(120);
  });

  it("summarizes task calls by their target and other tools by command, path or pattern", () => {
    expect(toolCallSummary("task", { subagent_type: "governance-builder", description: "x" })).toBe("governance-builder");
    expect(toolCallSummary("read", { filePath: "/a/b.ts" })).toBe("/a/b.ts");
    expect(toolCallSummary("bash", undefined)).toBe("");
  });
});
