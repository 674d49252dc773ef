import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { api, exec, footprint, openTurn, sessionId, sleep, wait } from "../e2e/helpers";
import { chat, requests, script, toolResults } from "../e2e/chat-helpers";
import { decide, pendingApprovals } from "../e2e/approval-helpers";

const pendingApproval = async (session: string) => (await pendingApprovals(session))[0]!;
const allow = (session: string, id: string) => decide(session, id, "allow");

// Plugin hooks, plugin-declared approvals and network-derived output, and the call context
// (issue 12), through the kit embedding (test/kit/entry.ts: the `kit-policy` plugin).

const MODEL = "fakeoai/gpt-fake";

describe("before_tool_call hooks run for direct and nested calls alike", () => {
  it("block: a nested call rejects with the hook's reason; the same call made directly fails the same way", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await exec(session, turnId, "try { await read({ path: '/etc/passwd' }); return 'read'; } catch (e) { return e.message; }");
    expect(r.value).toBe("read was blocked by a hook (kit-policy): reading /etc/passwd is not allowed");
    const off = await openTurn(session, { agentId: "off" });
    const direct = await api("POST", `/v1/sessions/${session}/turns/${off}/tools/read`, { path: "/etc/shadow" });
    expect(direct.json).toEqual({ status: "failed", error: "read was blocked by a hook (kit-policy): reading /etc/shadow is not allowed" });
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0].nested[0]).toMatchObject({ tool: "read", status: "error", decision: "blocked_by_hook" });
  });

  it("rewrite: the tool runs with the rewritten input, validated again against its schema", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    expect((await exec(session, turnId, "return await read({ path: 'alias:notes.txt' })")).value).toEqual({
      path: "notes.txt",
      text: "contents of notes.txt",
    });
    const bad = await exec(session, turnId, "try { return await read({ path: 'rewrite-invalid' }); } catch (e) { return e.message; }");
    expect(bad.value).toContain("a before_tool_call hook rewrote the input of read into an invalid one");
  });

  it("a hook that throws, or never answers, blocks the call (fail closed)", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "bigmem" });
    const thrown = await exec(session, turnId, "try { return await read({ path: 'throw' }); } catch (e) { return e.message; }");
    expect(thrown.value).toBe("read was blocked: a before_tool_call hook (kit-policy) failed");
    const hung = await exec(session, turnId, "try { return await read({ path: 'hang' }); } catch (e) { return e.message; }");
    expect(hung.value).toBe("read was blocked: a before_tool_call hook (kit-policy) failed");
  });

  it("a hook may demand approval: the call waits for the operator", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return await read({ path: 'needs-approval' })" });
    const p = await pendingApproval(session);
    expect(p.tool).toBe("read");
    await allow(session, p.approvalId);
    expect((await running).json).toMatchObject({ status: "completed", value: { path: "needs-approval" } });
  });

  it("hooks run again after a caught error and after a wait resume", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "park" });
    const parked = await exec(
      session,
      turnId,
      "try { await read({ path: '/etc/a' }); } catch (e) {}\nawait echo({ value: 1, delayMs: 600 });\ntry { return await read({ path: '/etc/b' }); } catch (e) { return e.message; }",
    );
    expect(parked.status).toBe("waiting");
    await sleep(700);
    const done = await wait(session, turnId, parked.runId);
    expect(done).toMatchObject({ status: "completed", value: "read was blocked by a hook (kit-policy): reading /etc/b is not allowed" });
  });
});

describe("the outer code-mode exec is a hook event of its own kind", () => {
  it("hooks see toolKind code_mode_exec with toolInputKind; they can block or rewrite the cell", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { channel: "slack" });
    const blocked = await exec(session, turnId, "// BLOCK_ME\nreturn 1");
    expect(blocked).toMatchObject({ status: "failed" });
    expect(blocked.error).toContain("cells that say BLOCK_ME are not allowed");
    expect((await exec(session, turnId, "// REWRITE_ME\nreturn 1")).value).toBe("rewritten by a hook");
    await exec(session, turnId, "const n: number = 1; return n", { language: "typescript" });
    await exec(session, turnId, "return await read({ path: 'a' })");
    const all = (await exec(session, turnId, "return await kit_hook_log({})")).value as Array<Record<string, unknown>>;
    const log = all.filter((e) => e.turnId === turnId);
    const cells = log.filter((e) => e.kind === "code_mode_exec" && e.hook === "before");
    expect(cells.map((e) => e.inputKind)).toEqual(expect.arrayContaining(["javascript", "typescript"]));
    expect(cells.every((e) => e.nested === false && e.channel === "slack")).toBe(true);
    // Nested calls are `tool` events marked nested; after-hooks saw them complete.
    expect(log.some((e) => e.hook === "before" && e.tool === "read" && e.kind === "tool" && e.nested === true)).toBe(true);
    expect(log.some((e) => e.hook === "after" && e.tool === "read" && e.ok === true)).toBe(true);
  });

  it("a hook that blanks code invalidates both aliases: the cell does not run (fail closed)", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
      code: "// BLANK_ME\nreturn 1",
      command: "// BLANK_ME\nreturn 1",
    });
    expect(r.json).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(r.json.error).toContain("invalidated exec's code/command");
  });

  it("a hook that rewrites only `code` while `command` holds the same source fails closed (the aliases no longer match)", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const src = "// REWRITE_ME\nreturn 'original source ran'";
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: src, command: src });
    expect(r.json).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(JSON.stringify(r.json)).not.toContain("original source ran");
  });

  it("mismatched aliases never run either one, whatever a hook saw", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, {
      code: "return 'code ran'",
      command: "// BLOCK_ME\nreturn 'command ran'",
    });
    expect(r.json.status).toBe("failed");
    expect(JSON.stringify(r.json)).not.toMatch(/code ran|command ran/);
  });

  it("a blocked cell is recorded as blocked_by_hook and its source never ran (the exec hook runs before the VM)", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await exec(session, turnId, "// BLOCK_ME\nawait notes_write({ key: 'blocked', text: 'x' }); return 1;");
    expect(r.status).toBe("failed");
    expect((await exec(session, turnId, "return await notes_read({ key: 'blocked' })")).value).toEqual([]);
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.json.calls[0]).toMatchObject({ tool: "exec", decision: "blocked_by_hook" });
  });
});

describe("client tool calls pass the same hooks and approvals before the caller gets them", () => {
  const ASK = [
    { name: "ask_user", description: "Ask the user", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
  ];

  it("nested: a blocked client call rejects in the guest; a rewritten one is handed out rewritten; one needing approval waits, then parks", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { clientTools: ASK });
    const blocked = await exec(session, turnId, "try { await ask_user({ q: 'BLOCK' }); return 'asked'; } catch (e) { return e.message; }");
    expect(blocked).toMatchObject({ status: "completed", value: "ask_user was blocked by a hook (kit-policy): that question may not be asked" });
    const rewritten = await exec(session, turnId, "return await ask_user({ q: 'rewrite' })");
    expect(rewritten).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask_user", input: { q: "rewritten by a hook" } }] });
    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return await ask_user({ q: 'needs-approval' })" });
    const p = await pendingApproval(session);
    expect(p.tool).toBe("ask_user");
    await allow(session, p.approvalId);
    expect((await running).json).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask_user", input: { q: "needs-approval" } }] });
  });

  it("direct (/chat, code mode off): a blocked client call is an error result for the model, never pending", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "b1", name: "ask_user", input: { q: "BLOCK" } }] }, { text: "ok, I will not ask" }]);
    const r = await chat(session, { model: MODEL, agentId: "off", clientTools: ASK, messages: [{ role: "user", content: `${s.marker} ask` }] });
    expect(r.json).toMatchObject({ status: "completed", message: { content: "ok, I will not ask" }, meta: { toolSummary: { failures: 1 } } });
    const [result] = toolResults((await requests(s.id))[1]!);
    expect(result).toMatchObject({ id: "b1", isError: false });
    expect(result!.content).toContain("blocked by a hook (kit-policy): that question may not be asked");
    // On record as an outer call of its own (it was missing from the trajectory), with the hook's decision.
    const t = await api("GET", `/v1/sessions/${session}/turns/${r.json.turnId}/trajectory`);
    expect(t.json.calls).toEqual([expect.objectContaining({ tool: "ask_user", via: "chat", status: "failed", decision: "blocked_by_hook" })]);
    expect(t.json.calls[0].callId).toMatch(/^ccall_/);
  });
});

describe("the outer wait passes hooks as code_mode_wait", () => {
  const hooksFor = async (session: string, turnId: string) => {
    const probe = await openTurn(session);
    const all = (await exec(session, probe, "return await kit_hook_log({})")).value as Array<Record<string, unknown>>;
    return all.filter((e) => e.turnId === turnId && e.kind === "code_mode_wait").map((e) => e.hook);
  };

  it("a blocked wait resumes nothing: the run stays parked and resumes once a wait is allowed", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { channel: "no-resume" });
    const parked = await exec(session, turnId, "let n = 1; await yield_control(); return n + 1");
    expect(parked.status).toBe("waiting");
    const refused = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: parked.runId });
    expect(refused.json).toMatchObject({
      status: "failed",
      error: "wait was blocked by a hook (kit-policy): resuming runs is not allowed on this channel",
    });
    expect(await hooksFor(session, turnId)).toEqual(["before"]);
    expect((await footprint(session)).runs).toBe(1);
  });

  it("allowed: before and after hooks see it; a hook asking for approval makes the wait wait for the operator", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const parked = await exec(session, turnId, "let n = 1; await yield_control(); return n + 1");
    expect(await wait(session, turnId, parked.runId)).toMatchObject({ status: "completed", value: 2 });
    expect(await hooksFor(session, turnId)).toEqual(["before", "after"]);

    const gated = await openTurn(session, { channel: "ask-resume" });
    const parked2 = await exec(session, gated, "await yield_control(); return 'resumed'");
    const running = api("POST", `/v1/sessions/${session}/turns/${gated}/tools/wait`, { runId: parked2.runId });
    const p = await pendingApproval(session);
    expect(p).toMatchObject({ tool: "wait", inputPreview: expect.stringContaining(parked2.runId) });
    await allow(session, p.approvalId);
    expect((await running).json).toMatchObject({ status: "completed", value: "resumed" });
  });
});

describe("client tool results pass the after_tool_call hooks", () => {
  const ASK = [
    { name: "ask_user", description: "Ask the user", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
  ];
  const afterHooks = async (session: string, turnId: string) => {
    const probe = await openTurn(session);
    const all = (await exec(session, probe, "return await kit_hook_log({})")).value as Array<Record<string, unknown>>;
    return all.filter((e) => e.hook === "after" && e.turnId === turnId && e.tool === "ask_user");
  };

  it("nested: the posted result (and a posted error) is seen once accepted, before wait delivers it", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { clientTools: ASK });
    const parked = await exec(
      session,
      turnId,
      "const a = await ask_user({ q: 'one' }); try { await ask_user({ q: 'two' }); } catch (e) { return [a, e.message]; }",
    );
    expect(await afterHooks(session, turnId)).toEqual([]);
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: parked.pendingToolCalls[0].callId, value: "yes" });
    expect(await afterHooks(session, turnId)).toEqual([expect.objectContaining({ ok: true, kind: "tool" })]);
    const second = await wait(session, turnId, parked.runId);
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, {
      callId: second.pendingToolCalls[0].callId,
      error: { message: "no" },
    });
    expect((await afterHooks(session, turnId)).map((e) => e.ok)).toEqual([true, false]);
    expect(await wait(session, turnId, second.runId)).toMatchObject({ status: "completed", value: ["yes", "no"] });
  });

  it("direct (/chat, code mode off): the caller's result is seen when it is posted", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "a1", name: "ask_user", input: { q: "name?" } }] }, { text: "thanks" }]);
    const r = await chat(session, { model: MODEL, agentId: "off", clientTools: ASK, messages: [{ role: "user", content: `${s.marker} ask` }] });
    expect(r.json.status).toBe("waiting");
    const turnId = r.json.turnId;
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: r.json.pendingToolCalls[0].callId, value: "Ada" });
    expect(await afterHooks(session, turnId)).toEqual([expect.objectContaining({ ok: true })]);
    expect((await chat(session, { turnId })).json).toMatchObject({ status: "completed", message: { content: "thanks" } });
  });
});

describe("plugin-declared approval and the call context", () => {
  it("a tool that requires approval by declaration waits on every surface; it runs with the turn's agent, sender, channel and its call id", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { senderId: "u-42", senderName: "Ada", channel: "web" });
    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return await kit_transfer({ amount: 5 })" });
    const p = await pendingApproval(session);
    expect(p).toMatchObject({ tool: "kit_transfer" });
    await allow(session, p.approvalId);
    const r = (await running).json;
    expect(r).toMatchObject({ status: "completed", value: { moved: 5, party: { senderId: "u-42", senderName: "Ada", channel: "web" } } });
    expect(r.value.callId).toMatch(/^call_/);

    const off = await openTurn(session, { agentId: "off" });
    const direct = api("POST", `/v1/sessions/${session}/turns/${off}/tools/kit_transfer`, { amount: 7 });
    const q = await pendingApproval(session);
    await api("POST", `/v1/sessions/${session}/approvals/${q.approvalId}`, { decision: "deny" });
    expect((await direct).json).toEqual({ status: "failed", error: "kit_transfer was denied by the operator" });
  });
});

describe("network-derived output reaches the model marked untrusted", () => {
  it("a cell that called a network-derived plugin tool is wrapped (markers neutralized); a cell that did not is not", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: "n1", name: "exec", input: { code: "return await kit_fetch({ url: 'https://example.test' })" } },
          { id: "n2", name: "exec", input: { code: "return await read({ path: 'a' })" } },
        ],
      },
      { text: "ok" },
    ]);
    const r = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} fetch` }] });
    expect(r.json.status).toBe("completed");
    const [wrapped, plain] = toolResults((await requests(s.id))[1]!);
    expect(wrapped!.content).toMatch(/^SECURITY NOTICE/);
    expect(wrapped!.content.match(/<<<END_EXTERNAL_UNTRUSTED_CONTENT/g)).toHaveLength(1);
    expect(wrapped!.content).toContain("[marker removed]");
    expect(plain!.content).not.toContain("EXTERNAL_UNTRUSTED_CONTENT");
  });

  it("the same tool called directly (code mode off) is wrapped too", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "d1", name: "kit_fetch", input: { url: "https://example.test" } }] }, { text: "ok" }]);
    const r = await chat(session, { model: MODEL, agentId: "off", messages: [{ role: "user", content: `${s.marker} fetch` }] });
    expect(r.json.status).toBe("completed");
    const [result] = toolResults((await requests(s.id))[1]!);
    expect(result!.content).toMatch(/^SECURITY NOTICE/);
    expect(result!.content).toContain("page at https://example.test");
  });

  it("a network-derived tool called from tool_search_code reaches the model wrapped", async () => {
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
});

describe("code mode over MCP: network-derived results reach the MCP client wrapped", () => {
  it("an exec that called a network-derived tool answers wrapped text (no structured content); a plain exec answers as before", async () => {
    const transport = new StreamableHTTPClientTransport(new URL("http://gateway/mcp"), {
      fetch: (url, init) => SELF.fetch(url.toString(), init),
      requestInit: { headers: { authorization: "Bearer test-token-a" } },
    });
    const client = new Client({ name: "kit-test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    await client.connect(transport);
    try {
      const fetched = (await client.callTool({
        name: "exec",
        arguments: { code: "return await kit_fetch({ url: 'https://example.test' })" },
      })) as CallToolResult;
      const text = (fetched.content[0] as { text: string }).text;
      expect(text).toMatch(/^SECURITY NOTICE/);
      expect(text.match(/<<<END_EXTERNAL_UNTRUSTED_CONTENT/g)).toHaveLength(1);
      expect(text).toContain("page at https://example.test");
      expect(fetched.structuredContent).toBeUndefined();
      expect(fetched.isError).toBe(false);
      const plain = (await client.callTool({ name: "exec", arguments: { code: "return 1 + 2" } })) as CallToolResult;
      expect(plain.structuredContent).toMatchObject({ status: "completed", value: 3 });
      expect((plain.content[0] as { text: string }).text).not.toContain("EXTERNAL_UNTRUSTED_CONTENT");
    } finally {
      await client.close();
    }
  });
});
