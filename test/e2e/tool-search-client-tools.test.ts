import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, sessionId, sessionProbe, sessionStub } from "./helpers";
import { appendSteps, chat, offeredTools, requests, script, toolResults } from "./chat-helpers";
import { decide, pendingApprovals } from "./approval-helpers";
import { mark, recordsSince } from "../support/log-capture";

/**
 * Tool Search (seed 004) calls client tools found by search (issue 20): `openclaw.tools.call`
 * inside `tool_search_code` parks the cell on the client call (continued with
 * `tool_search_code { runId }` once its result is posted), and `tool_call` (mode "tools") hands
 * the call to the caller as one pending client call whose result is the tool_call's result. In
 * /chat the turn pauses for the client either way, and the model reads the answer of its own
 * call. Through HTTP → session object → VM, with a hostile client.
 */

const MODEL = "fakeoai/gpt-fake";
const ASK = { name: "ask_user", description: "Ask the human user a question", parameters: { type: "object", properties: { q: { type: "string" } } } };
const GATED = { name: "ask_gated", description: "Ask the user something sensitive" };
const NAMES = { name: "list_names", description: "List the user's contact names", outputSchema: { type: "array", items: { type: "string" } } };

async function open(body: Record<string, unknown>, session = sessionId()) {
  const r = await api("POST", `/v1/sessions/${session}/turns`, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return { session, turnId: r.json.turnId as string };
}

const tool = (session: string, turnId: string, name: string, input: unknown) =>
  api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/${name}`, input);
const post = (session: string, turnId: string, body: unknown) => api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, body);
const trajectory = async (session: string, turnId: string) => (await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`)).json;
const parkedRuns = (session: string, turnId: string) => sessionProbe(session).parkedRunsOfTurn(turnId);

const ASK_CODE =
  'const hit = (await openclaw.tools.search("ask the user a question"))[0];' +
  'const name = await openclaw.tools.call(hit.id, { q: "Name?" });' +
  'const echoed = await openclaw.tools.call("plugin:demo:echo", { value: "hello " + name });' +
  "return { hit: hit.id, echoed };";

describe("tool_search_code over /v1: a client call parks the cell; tool_search_code { runId } continues it", () => {
  it("the cell answers waiting with the client call, the result is posted, the same program continues (after an eviction) and completes", async () => {
    const { session, turnId } = await open({ agentId: "search", clientTools: [ASK] });
    const first = await tool(session, turnId, "tool_search_code", { code: ASK_CODE });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      status: "waiting",
      runId: expect.stringMatching(/^cm_/),
      reason: "pending_tools",
      pendingToolCalls: [{ callId: expect.any(String), tool: "ask_user", input: { q: "Name?" } }],
    });
    expect(first.json.pendingToolCalls).toHaveLength(1);
    const { callId } = first.json.pendingToolCalls[0];
    expect(await parkedRuns(session, turnId)).toBe(1);

    // The parked cell does not hold a VM: it survives the object's eviction.
    await evictDurableObject(sessionStub(session));
    expect((await post(session, turnId, { callId, value: "Ada" })).status).toBe(202);
    const done = await tool(session, turnId, "tool_search_code", { runId: first.json.runId });
    expect(done.json).toMatchObject({ status: "completed", value: { hit: "client:ask_user", echoed: "hello Ada" } });
    expect(done.json.telemetry.calledTools).toEqual(
      expect.arrayContaining([
        { tool: "ask_user", id: "client:ask_user", source: "client", calls: 1 },
        { tool: "echo", id: "plugin:demo:echo", source: "openclaw", calls: 1 },
      ]),
    );
    expect(await parkedRuns(session, turnId)).toBe(0);

    const t = await trajectory(session, turnId);
    expect(t.calls.map((c: any) => [c.tool, c.status])).toEqual([
      ["tool_search_code", "waiting"],
      ["tool_search_code", "completed"],
    ]);
    expect(t.calls[0].nested.find((n: any) => n.source === "client")).toMatchObject({ invocationId: callId, tool: "ask_user", status: "ok" });
    expect(t.snapshots.map((e: any) => e.event)).toEqual(["parked", "resumed", "settled"]);
    // The run settled: continuing it again is the seed's "unavailable".
    expect((await tool(session, turnId, "tool_search_code", { runId: first.json.runId })).json).toMatchObject({
      status: "failed",
      code: "invalid_input",
      error: "code mode run is unavailable or expired.",
    });
  });

  it("a client error result is a catchable error in the cell; a result that breaks the declared outputSchema is one too", async () => {
    const { session, turnId } = await open({ agentId: "search", clientTools: [ASK, NAMES] });
    const code =
      "const out = [];" +
      'try { await openclaw.tools.call("client:ask_user", { q: "x" }); } catch (e) { out.push("ask: " + e.message); }' +
      'try { await openclaw.tools.call("list_names", {}); } catch (e) { out.push("names: " + e.message); }' +
      "return out;";
    const first = await tool(session, turnId, "tool_search_code", { code });
    expect(first.json.status).toBe("waiting");
    const ask = first.json.pendingToolCalls[0];
    expect((await post(session, turnId, { callId: ask.callId, error: { message: "the user closed the app" } })).status).toBe(202);
    const second = await tool(session, turnId, "tool_search_code", { runId: first.json.runId });
    expect(second.json).toMatchObject({ status: "waiting", runId: first.json.runId, pendingToolCalls: [{ tool: "list_names" }] });
    const names = second.json.pendingToolCalls[0];
    expect((await post(session, turnId, { callId: names.callId, value: [1, 2] })).status).toBe(202);
    const done = await tool(session, turnId, "tool_search_code", { runId: first.json.runId });
    expect(done.json).toMatchObject({
      status: "completed",
      value: ["ask: the user closed the app", "names: list_names result does not match its declared outputSchema (type check failed at /1)"],
    });
  });

  it("a hostile client: unknown callId 404, another turn's call 404, a second result 409; a continuation before the result parks again", async () => {
    const session = sessionId();
    const a = await open({ agentId: "search", clientTools: [ASK] }, session);
    const b = await open({ agentId: "search", clientTools: [ASK] }, session);
    const first = await tool(session, a.turnId, "tool_search_code", { code: 'return await openclaw.tools.call("client:ask_user", { q: "?" })' });
    const { callId } = first.json.pendingToolCalls[0];

    expect((await post(session, a.turnId, { callId: "call_999_deadbeef", value: 1 })).status).toBe(404);
    expect((await post(session, b.turnId, { callId, value: "from the other turn" })).status).toBe(404);
    // Continued early: nothing arrived, so it parks again on the same call (nothing is lost).
    const early = await tool(session, a.turnId, "tool_search_code", { runId: first.json.runId });
    expect(early.json).toMatchObject({ status: "waiting", runId: first.json.runId, pendingToolCalls: [{ callId, tool: "ask_user" }] });
    // Another turn cannot continue this run; input that names both or neither is refused.
    expect((await tool(session, b.turnId, "tool_search_code", { runId: first.json.runId })).json).toMatchObject({
      status: "failed",
      error: "code mode run belongs to a different turn.",
    });
    expect((await tool(session, a.turnId, "tool_search_code", { runId: first.json.runId, code: "return 1" })).json).toMatchObject({
      status: "failed",
      code: "invalid_input",
    });
    expect((await tool(session, a.turnId, "tool_search_code", { runId: 7 })).json).toMatchObject({ status: "failed", code: "invalid_input" });

    expect((await post(session, a.turnId, { callId, value: "first" })).status).toBe(202);
    expect((await post(session, a.turnId, { callId, value: "second" })).status).toBe(409);
    const done = await tool(session, a.turnId, "tool_search_code", { runId: first.json.runId });
    expect(done.json).toMatchObject({ status: "completed", value: "first" });
    // The other turn still works.
    expect((await tool(session, b.turnId, "tool_search_code", { code: "return 2" })).json).toMatchObject({ status: "completed", value: 2 });
  });

  it("limits hold on the client call: its input schema, the pending-call cap, and operator approval (deny fails it, allow hands it out)", async () => {
    const { session, turnId } = await open({ agentId: "searchclient", clientTools: [ASK, GATED] });
    const bad = await tool(session, turnId, "tool_search_code", {
      code: 'try { await openclaw.tools.call("client:ask_user", { q: 42 }); } catch (e) { return e.message; }',
    });
    expect(bad.json.status).toBe("completed");
    expect(bad.json.value).toMatch(/^invalid input for ask_user: /);

    const capped = await tool(session, turnId, "tool_search_code", {
      code: 'const c = () => openclaw.tools.call("client:ask_user", {}); try { await Promise.all([c(), c(), c()]); } catch (e) { return e.message; }',
    });
    expect(capped.json).toMatchObject({ status: "completed" });
    expect(capped.json.value).toContain("maxPendingToolCalls is 2");
    expect(await parkedRuns(session, turnId)).toBe(0);

    const denied = tool(session, turnId, "tool_search_code", {
      code: 'try { return await openclaw.tools.call("client:ask_gated", { x: 1 }); } catch (e) { return "refused: " + e.message; }',
    });
    const [ask] = await pendingApprovals(session);
    expect(ask!.tool).toBe("ask_gated");
    await decide(session, ask!.approvalId, "deny", "not now");
    const d = await denied;
    expect(d.json.status).toBe("completed");
    expect(d.json.value).toMatch(/^refused: .*not now/);

    const allowed = tool(session, turnId, "tool_search_code", { code: 'return await openclaw.tools.call("client:ask_gated", { x: 2 })' });
    const [again] = await pendingApprovals(session);
    await decide(session, again!.approvalId, "allow");
    const a = await allowed;
    expect(a.json).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask_gated", input: { x: 2 } }] });
    expect((await post(session, turnId, { callId: a.json.pendingToolCalls[0].callId, value: "ok" })).status).toBe(202);
    expect((await tool(session, turnId, "tool_search_code", { runId: a.json.runId })).json).toMatchObject({ status: "completed", value: "ok" });
  });
});

describe('tool_call (mode "tools") over /v1: a client tool becomes one pending client call; its result answers the tool_call', () => {
  it("waiting with a ccall_ id and no run; client-results takes the value once (after an eviction) and answers the tool_call's result", async () => {
    const m = mark();
    const { session, turnId } = await open({ agentId: "searchtools", clientTools: [ASK] });
    const r = await tool(session, turnId, "tool_call", { id: "client:ask_user", args: { q: "Name?" } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      status: "waiting",
      reason: "pending_tools",
      pendingToolCalls: [{ callId: expect.stringMatching(/^ccall_/), tool: "ask_user", input: { q: "Name?" } }],
      telemetry: { calledTools: [{ tool: "ask_user", id: "client:ask_user", source: "client", calls: 1 }] },
    });
    expect(r.json.runId).toBeUndefined();
    expect(await parkedRuns(session, turnId)).toBe(0);
    const { callId } = r.json.pendingToolCalls[0];

    await evictDurableObject(sessionStub(session));
    const settled = await post(session, turnId, { callId, value: "Ada" });
    expect(settled.status).toBe(202);
    expect(settled.json).toEqual({ accepted: true, result: { status: "completed", value: "Ada" } });
    expect((await post(session, turnId, { callId, value: "again" })).status).toBe(409);

    const t = await trajectory(session, turnId);
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0]).toMatchObject({ tool: "tool_call", status: "waiting" });
    expect(t.calls[0].nested).toEqual([expect.objectContaining({ invocationId: callId, tool: "ask_user", source: "client", status: "ok" })]);
    expect(t.snapshots).toEqual([]);
    expect(recordsSince(m).filter((x) => x.kind === "tool_call" && x.callId === callId)).toEqual([
      expect.objectContaining({ parentCallId: t.calls[0].callId, tool: "ask_user", source: "client", outcome: "ok", decision: "allowed" }),
    ]);
  });

  it("an error result, or one that breaks the declared outputSchema, answers the tool_call as failed", async () => {
    const { session, turnId } = await open({ agentId: "searchtools", clientTools: [ASK, NAMES] });
    const ask = (await tool(session, turnId, "tool_call", { id: "ask_user", args: {} })).json.pendingToolCalls[0];
    expect((await post(session, turnId, { callId: ask.callId, error: { message: "the user closed the app" } })).json).toEqual({
      accepted: true,
      result: { status: "failed", error: "the user closed the app" },
    });
    const names = (await tool(session, turnId, "tool_call", { id: "client:list_names" })).json.pendingToolCalls[0];
    expect((await post(session, turnId, { callId: names.callId, value: { not: "names" } })).json).toEqual({
      accepted: true,
      result: { status: "failed", error: "list_names result does not match its declared outputSchema (type check failed)" },
    });
  });

  it("a hostile client: unknown or guessed callIds 404, another turn's call 404 there and still answerable here", async () => {
    const session = sessionId();
    const a = await open({ agentId: "searchtools", clientTools: [ASK] }, session);
    const b = await open({ agentId: "searchtools", clientTools: [ASK] }, session);
    const { callId } = (await tool(session, a.turnId, "tool_call", { id: "client:ask_user", args: {} })).json.pendingToolCalls[0];
    expect((await post(session, a.turnId, { callId: "ccall_00000000-0000-0000-0000-000000000000", value: 1 })).status).toBe(404);
    expect((await post(session, b.turnId, { callId, value: "wrong turn" })).status).toBe(404);
    expect((await post(session, a.turnId, { callId, value: "right turn" })).json).toEqual({
      accepted: true,
      result: { status: "completed", value: "right turn" },
    });
  });

  it("limits hold: input schema and size, the pending-call cap per turn, approval (deny: failed, nothing pending); deleting the turn forgets its calls", async () => {
    const { session, turnId } = await open({ agentId: "searchtoolsclient", clientTools: [ASK, GATED] });
    const bad = await tool(session, turnId, "tool_call", { id: "client:ask_user", args: { q: 42 } });
    expect(bad.json).toMatchObject({ status: "failed", code: "invalid_input" });
    expect(bad.json.error).toMatch(/^invalid input for ask_user: /);
    const huge = await tool(session, turnId, "tool_call", { id: "client:ask_gated", args: { blob: "x".repeat(200_000) } });
    expect(huge.json).toMatchObject({ status: "failed", code: "invalid_input", error: expect.stringContaining("larger than maxOutputBytes") });

    const one = (await tool(session, turnId, "tool_call", { id: "client:ask_user", args: {} })).json;
    const two = (await tool(session, turnId, "tool_call", { id: "client:ask_user", args: {} })).json;
    expect([one.status, two.status]).toEqual(["waiting", "waiting"]);
    const three = await tool(session, turnId, "tool_call", { id: "client:ask_user", args: {} });
    expect(three.json).toMatchObject({ status: "failed", error: expect.stringContaining("maxPendingToolCalls") });
    expect((await post(session, turnId, { callId: one.pendingToolCalls[0].callId, value: 1 })).status).toBe(202);

    const denied = tool(session, turnId, "tool_call", { id: "client:ask_gated", args: { x: 1 } });
    const [gate] = await pendingApprovals(session);
    await decide(session, gate!.approvalId, "deny", "no");
    const d = await denied;
    expect(d.json.status).toBe("failed");
    expect(d.json.pendingToolCalls).toBeUndefined();

    const still = two.pendingToolCalls[0].callId;
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    expect((await post(session, turnId, { callId: still, value: 1 })).status).toBe(404);
    expect((await sessionProbe(session).storageRows("SELECT COUNT(*) AS n FROM tool_call_clients WHERE turn_id = ?", turnId))[0]!.n).toBe(0);
  });
});

describe("/chat: the turn pauses for the client and the model reads the answer of its own Tool Search call", () => {
  it("mode \"tools\": the model's tool_call waits for the client; the result becomes that call's tool message; hostile posts are refused", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "tc1", name: "tool_call", input: { id: "client:ask_user", args: { q: "Name?" } } }] }]);
    const first = await chat(session, {
      model: MODEL,
      agentId: "searchtools",
      clientTools: [ASK],
      messages: [{ role: "user", content: `${s.marker} ask the user` }],
    });
    expect(first.json).toMatchObject({
      status: "waiting",
      pendingToolCalls: [{ callId: expect.stringMatching(/^ccall_/), tool: "ask_user", input: { q: "Name?" } }],
      meta: { stopReason: "client_tools", toolSummary: { calls: 1, tools: ["tool_call"] } },
    });
    const pending = first.json.pendingToolCalls[0];
    // The gateway's bookkeeping stays inside.
    expect(Object.keys(pending).sort()).toEqual(["callId", "input", "tool"]);
    const turnId = first.json.turnId as string;

    expect((await chat(session, { turnId })).status).toBe(409);
    const other = await open({ agentId: "searchtools", clientTools: [ASK] }, session);
    expect((await post(session, other.turnId, { callId: pending.callId, value: "x" })).status).toBe(404);
    expect((await post(session, turnId, { callId: "ccall_guess", value: "x" })).status).toBe(404);
    expect((await post(session, turnId, { callId: pending.callId, value: "Ada" })).json).toEqual({
      accepted: true,
      result: { status: "completed", value: "Ada" },
    });
    expect((await post(session, turnId, { callId: pending.callId, value: "Eve" })).status).toBe(409);

    await appendSteps(s.id, [{ text: "The user is Ada." }]);
    const second = await chat(session, { turnId });
    expect(second.json).toMatchObject({ status: "completed", message: { content: "The user is Ada." } });
    const all = await requests(s.id);
    const results = toolResults(all[1]!);
    expect(results.map((r) => r.id)).toEqual(["tc1"]);
    expect(JSON.parse(results[0]!.content)).toEqual({ status: "completed", value: "Ada" });
  });

  it('mode "tools": a client error result reaches the model as the tool_call\'s error', async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "te1", name: "tool_call", input: { id: "ask_user", args: {} } }] }]);
    const first = await chat(session, {
      model: MODEL,
      agentId: "searchtools",
      clientTools: [ASK],
      messages: [{ role: "user", content: `${s.marker} ask` }],
    });
    const turnId = first.json.turnId as string;
    await post(session, turnId, { callId: first.json.pendingToolCalls[0].callId, error: { message: "the user closed the app" } });
    await appendSteps(s.id, [{ text: "They left." }]);
    expect((await chat(session, { turnId })).json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 1 } } });
    const [result] = toolResults((await requests(s.id))[1]!);
    expect(result!.id).toBe("te1");
    expect(JSON.parse(result!.content)).toEqual({ status: "failed", error: "the user closed the app" });
  });

  it('mode "code": the cell parks on the client call; continuing resumes it and the model reads the finished cell (all its output), never a runId', async () => {
    const session = sessionId();
    const code =
      'console.log("asking");' +
      'let a; try { a = await openclaw.tools.call("client:ask_user", { q: "first" }); } catch (e) { a = "error: " + e.message; }' +
      'const b = await openclaw.tools.call("client:ask_user", { q: "second" });' +
      "return [a, b];";
    const s = await script([{ toolCalls: [{ id: "sc1", name: "tool_search_code", input: { code } }] }]);
    const first = await chat(session, {
      model: MODEL,
      agentId: "search",
      clientTools: [ASK],
      messages: [{ role: "user", content: `${s.marker} ask twice` }],
    });
    expect(first.json).toMatchObject({
      status: "waiting",
      pendingToolCalls: [{ tool: "ask_user", input: { q: "first" }, runId: expect.stringMatching(/^cm_/) }],
    });
    const turnId = first.json.turnId as string;
    const p1 = first.json.pendingToolCalls[0];
    expect(Object.keys(p1).sort()).toEqual(["callId", "input", "runId", "tool"]);
    expect(offeredTools((await requests(s.id))[0]!)).toEqual(["tool_search_code"]);

    // A client error result; the continuation resumes the cell, which parks again on its second call: no model call.
    expect((await post(session, turnId, { callId: p1.callId, error: { message: "no answer" } })).status).toBe(202);
    const second = await chat(session, { turnId });
    expect(second.json).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask_user", input: { q: "second" }, runId: p1.runId }] });
    expect(await requests(s.id)).toHaveLength(1);
    const p2 = second.json.pendingToolCalls[0];
    expect((await post(session, turnId, { callId: p1.callId, value: "late" })).status).toBe(409);

    expect((await post(session, turnId, { callId: p2.callId, value: "Ada" })).status).toBe(202);
    await appendSteps(s.id, [{ text: "done" }]);
    const third = await chat(session, { turnId });
    expect(third.json).toMatchObject({
      status: "completed",
      message: { content: "done" },
      meta: { assistantTurns: 2, bridgeCalls: { call: 2 }, toolSummary: { calls: 1, tools: ["tool_search_code"], failures: 0 } },
    });
    const all = await requests(s.id);
    expect(all).toHaveLength(2);
    const results = toolResults(all[1]!);
    expect(results.map((r) => r.id)).toEqual(["sc1"]);
    const seen = JSON.parse(results[0]!.content);
    expect(seen).toMatchObject({ status: "completed", value: ["error: no answer", "Ada"] });
    // Output from before the park reaches the model too: it never saw the waiting answers.
    expect(JSON.stringify(seen.output)).toContain("asking");
    expect(results[0]!.content).not.toContain("cm_");

    const t = await trajectory(session, turnId);
    expect(t.calls.map((c: any) => [c.callId, c.tool, c.status])).toEqual([
      ["sc1", "tool_search_code", "waiting"],
      ["sc1", "tool_search_code", "waiting"],
      ["sc1", "tool_search_code", "completed"],
    ]);
    expect(t.snapshots.map((e: any) => e.event)).toEqual(["parked", "resumed", "parked", "resumed", "settled"]);
    expect(await parkedRuns(session, turnId)).toBe(0);
  });
});
