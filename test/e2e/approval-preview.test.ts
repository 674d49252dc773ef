import { describe, expect, inject, it } from "vitest";
import { api, openTurn, sessionId } from "./helpers";
import { linesSince, mark, recordsSince } from "../support/log-capture";
import { decide, pendingApprovals, startExec } from "./approval-helpers";

// What an operator sees of a call to approve (GET …/approvals → inputPreview), through HTTP →
// session object → VM. The `approvepreview` agent (test/test-config.ts) gates `echo`, whose
// `value` takes anything: the cell is the hostile caller shaping the input.

const HOSTILE = inject("mcpHostileUrl");

describe("operators see what they approve", () => {
  it("tool names an MCP server wrote with a bidirectional override, a zero-width space, NUL and ESC are listed escaped", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvedisguised", mcpServers: { disguised: { url: `${HOSTILE}/disguised/mcp` } } });
    // Both tools at once: two calls wait for a decision side by side.
    const running = startExec(
      session,
      turnId,
      "const names = Object.keys(MCP.disguised).filter((n) => typeof MCP.disguised[n] === 'function' && !n.startsWith('$'));\n" +
        "return (await Promise.all(names.map((n) => MCP.disguised[n]({})))).length;",
    );
    const pending = await pendingApprovals(session, 2);
    expect(pending.map((p) => p.tool).sort()).toEqual(["disguised__safe_read\\u202Eetirw_lla_eteled", "disguised__t\\u200Bx\\u0000y\\u001B[31mred"]);
    for (const p of pending) expect(p.tool).not.toMatch(/[\u0000-\u001F\u200B\u202E]/);
    for (const p of pending) await decide(session, p.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: 2 });
  });

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

describe("approvals never leak what they gate", () => {
  const SECRETS = ["sk-proj-AbCdEf0123456789XyZqq", `ghp_${"A1b2C3d4E5".repeat(4)}`, "test-token-b", "fake-key-openai"];
  const TEXT = `keys: ${SECRETS[0]} and ${SECRETS[1]}; gateway ${SECRETS[2]}; provider ${SECRETS[3]}; Authorization: Bearer abcdEFGH12345678`;

  it("inputPreview, the trajectory and the log mask credential literals and registered secrets of a gated nested call", async () => {
    const m = mark();
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, `await notes_write({ key: 'secret', text: ${JSON.stringify(TEXT)} }); return 'ok';`);
    const [p] = await pendingApprovals(session);
    for (const s of SECRETS) expect(p!.inputPreview).not.toContain(s);
    expect(p!.inputPreview).not.toContain("abcdEFGH12345678");
    expect(p!.inputPreview).toContain("***");
    await decide(session, p!.approvalId, "allow");
    expect((await running).json.status).toBe("completed");
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    const text = JSON.stringify(t.json);
    for (const s of SECRETS) expect(text).not.toContain(s);
    // The log: one tool_call record for the nested call, with its decision and never its input.
    const own = linesSince(m).filter((l) => l.includes(turnId));
    for (const s of SECRETS) expect(own.join("\n")).not.toContain(s);
    const calls = recordsSince(m).filter((r) => r.kind === "tool_call" && r.turnId === turnId);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ tool: "notes_write", decision: "approved", outcome: "ok" });
    expect(Object.keys(calls[0]!)).not.toContain("input");
    expect(JSON.stringify(calls[0])).not.toContain("keys:");
  });

  it("a huge input is previewed within 2 KiB; the cell still runs the whole input after the allow", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "const r = await notes_write({ key: 'big', text: 'é'.repeat(16000) }); return r.bytes;");
    const [p] = await pendingApprovals(session);
    expect(new TextEncoder().encode(p!.inputPreview).length).toBeLessThanOrEqual(2048);
    // Each field is cut on its own (every key stays visible), then the whole is bounded.
    expect(p!.inputPreview).toContain('"key":"big"');
    expect(p!.inputPreview).toContain("more characters]");
    await decide(session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: 32000 });
  });

  it("the approval preview cannot be steered to hide what is approved: a long field first leaves the note key in view", async () => {
    // Regression: the preview cut the input's compact JSON at 2 KiB from the end. The model controls
    // key order and sizes, so `{ text: <3 KB>, key: "victim" }` showed the operator only harmless
    // text: the field that decides the side effect (which note is overwritten; a recipient, a path,
    // an amount on other tools) was never displayed, and the operator approved blind while the
    // approval ran the whole input. Every field stays in view now.
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(session, turnId, "return await notes_write({ text: 'lorem ipsum '.repeat(300), key: 'victim-key' });");
    const [p] = await pendingApprovals(session);
    await decide(session, p!.approvalId, "deny");
    await running;
    // Expected: the operator can see which note the call would write.
    expect(p!.inputPreview).toContain("victim-key");
  });

  it("a direct (code mode off) gated call's input reaches the trajectory redacted, like its approval preview", async () => {
    // Regression: a direct call's input went to the trajectory as given (only exec's code/command
    // were redacted) and unbounded (up to the 1 MiB body), so an operator reading the trajectory
    // saw the credential the approval list hid. The README promises "each outer call (callId,
    // tool, redacted input, …)"; the same call's approval preview and nested previews are masked.
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvedirect" });
    const call = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/notes_write`, { key: "direct-secret", text: TEXT });
    const [p] = await pendingApprovals(session);
    for (const s of SECRETS) expect(p!.inputPreview).not.toContain(s); // the approval preview is masked…
    await decide(session, p!.approvalId, "allow");
    expect((await call).json).toMatchObject({ status: "completed" });
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0]).toMatchObject({ tool: "notes_write", decision: "approved" });
    // …the trajectory must be too.
    for (const s of SECRETS) expect(JSON.stringify(t.json.calls[0].input)).not.toContain(s);
  });
});
