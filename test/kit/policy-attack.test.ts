import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { api, exec, openTurn, sessionId, sleep } from "../e2e/helpers";
import { chat, requests, script, toolResults } from "../e2e/chat-helpers";
import { decide, pendingApprovals } from "../e2e/approval-helpers";

// Hostile-tester pass over issue 12 through the kit embedding (test/kit/entry.ts: the `kit-policy`
// plugin's hooks, kit_transfer that requires approval by declaration, kit_fetch whose output is
// network-derived). `holds:` tests are regression tests for attacks that failed.

const TRANSFER = "plugin:kit-policy:kit_transfer";

describe("Tool Search cells pause for approvals too", () => {
  it("holds: tool_search_code (400 ms codeTimeoutMs) waits past its deadline for a declared approval and completes after the allow", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "searchfast", senderId: "u-1", channel: "cli" });
    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/tool_search_code`, {
      code: `return await openclaw.tools.call(${JSON.stringify(TRANSFER)}, { amount: 3 })`,
    });
    const [p] = await pendingApprovals(session);
    expect(p!.tool).toBe("kit_transfer");
    await sleep(1000); // over twice the cell's 400 ms budget
    await decide(session, p!.approvalId, "allow");
    const r = (await running).json;
    expect(r).toMatchObject({ status: "completed", value: { moved: 3, party: { senderId: "u-1", channel: "cli" } } });
    expect(r.value.callId).toMatch(/^call_/);
  });

  it("holds: a tool_search_code body that spins while its approval is pending still times out on its budget; the approval is cancelled", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "searchfast" });
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/tool_search_code`, {
      code:
        `openclaw.tools.call(${JSON.stringify(TRANSFER)}, { amount: 1 }).catch(() => {});\n` +
        "await openclaw.tools.call('openclaw:read', { path: 'a' });\nlet i = 0; for (;;) { i++; }",
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "failed", code: "timeout" });
    expect((await api("GET", `/v1/sessions/${session}/approvals`)).json).toEqual([]);
  }, 20_000);

  it("holds: structured tool_call (mode tools) of a tool that declares approval is refused on deny", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "searchtools" });
    const call = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/tool_call`, { id: TRANSFER, args: { amount: 9 } });
    const [p] = await pendingApprovals(session);
    await decide(session, p!.approvalId, "deny");
    expect((await call).json).toMatchObject({ status: "failed", error: "kit_transfer was denied by the operator" });
  });
});

describe("one decision serves exactly one call", () => {
  it("holds: 16 parallel declared-approval calls, all allowed at once: each runs once, with its own invocation id", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "bigmem" });
    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
      code: "const r = await Promise.all(Array.from({ length: 16 }, (_, i) => kit_transfer({ amount: i }))); return r.map((x) => [x.moved, x.callId]);",
    });
    const pending = await pendingApprovals(session, 16);
    const answers = await Promise.all(pending.map((p) => decide(session, p.approvalId, "allow")));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const r = (await running).json;
    expect(r.status).toBe("completed");
    expect(r.value.map((x: [number, string]) => x[0])).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(new Set(r.value.map((x: [number, string]) => x[1])).size).toBe(16);
    // Every decision was consumed: re-deciding any of them is a conflict.
    for (const p of pending.slice(0, 3)) expect((await decide(session, p.approvalId, "allow")).status).toBe(409);
  });

  it("holds: a hook-demanded approval is asked on every call, also when the same input repeats in one batch", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "bigmem" });
    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
      code: "const r = await Promise.allSettled([read({ path: 'needs-approval' }), read({ path: 'needs-approval' })]); return r.map((x) => x.status);",
    });
    const pending = await pendingApprovals(session, 2);
    expect(pending.map((p) => p.tool)).toEqual(["read", "read"]);
    await decide(session, pending[0]!.approvalId, "allow");
    await decide(session, pending[1]!.approvalId, "deny");
    expect((await running).json).toMatchObject({ status: "completed", value: expect.arrayContaining(["fulfilled", "rejected"]) });
  });
});

describe("exec hooks and the code/command aliases", () => {
  it("holds: a hook that rewrites only `code` while `command` holds the same source fails closed (the aliases no longer match)", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const src = "// REWRITE_ME\nreturn 'original source ran'";
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: src, command: src });
    expect(r.json).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(JSON.stringify(r.json)).not.toContain("original source ran");
  });

  it("holds: mismatched aliases never run either one, whatever a hook saw", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
      code: "return 'code ran'",
      command: "// BLOCK_ME\nreturn 'command ran'",
    });
    expect(r.json.status).toBe("failed");
    expect(JSON.stringify(r.json)).not.toMatch(/code ran|command ran/);
  });

  it("holds: a blocked cell is recorded as blocked_by_hook and its source never ran (the exec hook runs before the VM)", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await exec(session, turnId, "// BLOCK_ME\nawait notes_write({ key: 'blocked', text: 'x' }); return 1;");
    expect(r.status).toBe("failed");
    expect((await exec(session, turnId, "return await notes_read({ key: 'blocked' })")).value).toEqual([]);
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0]).toMatchObject({ tool: "exec", decision: "blocked_by_hook" });
  });
});

describe("untrusted output through Tool Search and /mcp", () => {
  it("holds: a network-derived tool called from tool_search_code reaches the model wrapped", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          {
            id: "t1",
            name: "tool_search_code",
            input: { code: "return await openclaw.tools.call('plugin:kit-policy:kit_fetch', { url: 'https://example.test' })" },
          },
        ],
      },
      { text: "ok" },
    ]);
    const r = await chat(session, { model: "fakeoai/gpt-fake", agentId: "search", messages: [{ role: "user", content: `${s.marker} go` }] });
    expect(r.json.status).toBe("completed");
    const [t] = toolResults((await requests(s.id))[1]!);
    expect(t!.content).toMatch(/^SECURITY NOTICE/);
    expect(t!.content.match(/<<<END_EXTERNAL_UNTRUSTED_CONTENT/g)).toHaveLength(1);
  });

  it("holds: over /mcp, a declared approval waits in the MCP session, is listed and decided over /v1, and the exec completes", async () => {
    const transport = new StreamableHTTPClientTransport(new URL("http://gateway/mcp"), {
      fetch: (url, init) => SELF.fetch(url.toString(), init),
      requestInit: { headers: { authorization: "Bearer test-token-a" } },
    });
    const client = new Client({ name: "kit-attack", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    await client.connect(transport);
    try {
      const session = `mcp-${transport.sessionId!.split(".")[0]}`;
      const call = client.callTool({ name: "exec", arguments: { code: "return await kit_transfer({ amount: 11 })" } });
      const [p] = await pendingApprovals(session);
      expect(p!.tool).toBe("kit_transfer");
      await decide(session, p!.approvalId, "allow");
      const r = (await call) as CallToolResult;
      expect(r.isError).toBe(false);
      expect(r.structuredContent).toMatchObject({ status: "completed", value: { moved: 11 } });
    } finally {
      await client.close();
    }
  });
});
