import { describe, expect, it } from "vitest";
import { api, openTurn, sessionId } from "./helpers";
import { decide, pendingApprovals, startExec } from "./approval-helpers";

// What an operator sees of a call to approve (GET …/approvals → inputPreview), through HTTP →
// session object → VM. The `approvepreview` agent (test/test-config.ts) gates `echo`, whose
// `value` takes anything: the cell is the hostile caller shaping the input.

describe("operators see what they approve", () => {
  it("an input that fits the bound is shown whole: no string, list or key is cut", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvepreview" });
    const running = startExec(
      session,
      turnId,
      "const value = { memo: 'm'.repeat(1200) + 'END', ids: Array.from({ length: 60 }, (_, i) => i), to: 'mallory' };\n" +
        "return await echo({ value, delayMs: 1 });",
    );
    const [p] = await pendingApprovals(session);
    const memo = "m".repeat(1200) + "END";
    expect(JSON.parse(p!.inputPreview)).toEqual({ value: { memo, ids: Array.from({ length: 60 }, (_, i) => i), to: "mallory" }, delayMs: 1 });
    expect(p!.inputPreview).not.toContain("more characters");
    expect(p!.inputPreview).not.toContain("more items");
    await decide(session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: { memo, to: "mallory" } });
  });

  it("bidirectional overrides, zero-width and filler characters are shown escaped in keys and values, secrets still masked; the trajectory's preview too", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvepreview" });
    // The guest builds the characters itself (the source holds only their escapes).
    const running = startExec(
      session,
      turnId,
      "const value = { ['to\\u200B']: 'mallory\\u202Egro.elpmaxe', note: '\\u2066approved\\u2069 \\u3164', apiKey: 'k-123456' };\n" +
        "return await echo({ value, delayMs: 1 });",
    );
    const [p] = await pendingApprovals(session);
    const preview = p!.inputPreview;
    expect(preview).toContain('"to\\u200B":"mallory\\u202Egro.elpmaxe"');
    expect(preview).toContain('"note":"\\u2066approved\\u2069 \\u3164"');
    expect(preview).not.toMatch(/[\u200B\u202E\u2066\u2069\u3164]/u);
    expect(preview).toContain('"apiKey":"***"');
    expect(preview).not.toContain("k-123456");
    // Still JSON of the input the call was made with (the secret masked).
    expect(JSON.parse(preview)).toEqual({
      value: { "to\u200B": "mallory\u202Egro.elpmaxe", note: "\u2066approved\u2069 \u3164", apiKey: "***" },
      delayMs: 1,
    });
    await decide(session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed" });
    const t = (await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`)).json;
    const nested = t.calls.flatMap((c: any) => c.nested ?? []).find((n: any) => n.tool === "echo");
    expect(nested.input).toContain("mallory\\u202Egro.elpmaxe");
    expect(nested.input).not.toMatch(/[\u200B\u202E\u2066\u2069\u3164]/u);
  });
});
