import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { api, openTurn, sessionId, sleep } from "../e2e/helpers";
import { decide, pendingApprovals } from "../e2e/approval-helpers";

// Operator approvals on the kit embedding's surfaces (test/kit/entry.ts: the `kit-policy` plugin's
// kit_transfer requires approval by declaration, its hooks demand approval for some reads):
// Tool Search cells and tool_call, parallel calls, and an exec over /mcp.

const TRANSFER = "plugin:kit-policy:kit_transfer";

describe("Tool Search cells pause for approvals too", () => {
  it("tool_search_code (400 ms codeTimeoutMs) waits past its deadline for a declared approval and completes after the allow", async () => {
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

  it("a tool_search_code body that spins while its approval is pending still times out on its budget; the approval is cancelled", async () => {
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

  it("structured tool_call (mode tools) of a tool that declares approval is refused on deny", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "searchtools" });
    const call = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/tool_call`, { id: TRANSFER, args: { amount: 9 } });
    const [p] = await pendingApprovals(session);
    await decide(session, p!.approvalId, "deny");
    expect((await call).json).toMatchObject({ status: "failed", error: "kit_transfer was denied by the operator" });
  });
});

describe("one decision serves exactly one call", () => {
  it("16 parallel declared-approval calls, all allowed at once: each runs once, with its own invocation id", async () => {
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

  it("a hook-demanded approval is asked on every call, also when the same input repeats in one batch", async () => {
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

describe("approvals over /mcp", () => {
  it("over /mcp, a declared approval waits in the MCP session, is listed and decided over /v1, and the exec completes", async () => {
    const transport = new StreamableHTTPClientTransport(new URL("http://gateway/mcp"), {
      fetch: (url, init) => SELF.fetch(url.toString(), init),
      requestInit: { headers: { authorization: "Bearer test-token-a" } },
    });
    const client = new Client({ name: "kit-approvals", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
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
