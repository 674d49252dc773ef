import { describe, expect, it } from "vitest";
import { api, expectHealthy, sessionId, TOKEN_B, wait } from "./helpers";
import { appendSteps, chat, expectNoInternals, requests, script, toolResults, trajectory, user } from "./chat-helpers";

// The tool calls a model makes over POST /v1/sessions/:sessionId/chat: the fake provider plays
// whatever ids, names, arguments and counts a test scripts. Whatever the model sends, its calls
// can be answered, its mistakes come back to it as tool errors, and the next request is valid.

const MODEL = "fakeoai/gpt-fake";
const ANT = "fakeant/claude-fake";
const ASK = [{ name: "ask_user", description: "Ask the user" }];

const post = (session: string, turnId: string, body: unknown, token?: string) =>
  api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, body, token);

describe("/chat: tool call ids the model chooses", () => {
  // Regression: providers that number ids per response (call_0, call_1 …) reuse them across rounds,
  // and the second round's pending call could never be answered: client-results said "already
  // delivered" (the delivered record was keyed by the model's id) and the continuation "still
  // pending", so the turn was stranded. Callers answer gateway-issued call ids, never the provider's.
  it("a tool call id the model reuses in a later round can still be answered", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "call_0", name: "ask_user", input: { q: 1 } }] }]);
    const first = await chat(session, { model: MODEL, agentId: "off", clientTools: ASK, messages: user(s.marker) });
    expect(first.json).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask_user" }] });
    const turnId = first.json.turnId;
    const firstId = first.json.pendingToolCalls[0].callId;
    expect(firstId).not.toBe("call_0"); // the caller answers a gateway id, never the provider's
    expect((await post(session, turnId, { callId: firstId, value: "one" })).status).toBe(202);

    await appendSteps(s.id, [{ toolCalls: [{ id: "call_0", name: "ask_user", input: { q: 2 } }] }, { text: "done" }]);
    const second = await chat(session, { turnId });
    expect(second.json).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask_user", input: { q: 2 } }] });
    const again = second.json.pendingToolCalls[0].callId;
    const answered = await post(session, turnId, { callId: again, value: "two" });
    expect(answered.status).toBe(202);
    const third = await chat(session, { turnId });
    expect(third.status).toBe(200);
    expect(third.json).toMatchObject({ status: "completed", message: { content: "done" } });
  });

  // Regression: nothing bounds the ids a provider sends, while client-results accepts callIds of at
  // most 128 characters: a pending call handed out under a longer model id could never be answered.
  it("a pending call whose model id is 200 characters long can be answered", async () => {
    const session = sessionId();
    const id = "x".repeat(200);
    const s = await script([{ toolCalls: [{ id, name: "ask_user", input: { q: 1 } }] }, { text: "done" }]);
    const first = await chat(session, { model: MODEL, agentId: "off", clientTools: ASK, messages: user(s.marker) });
    expect(first.json.status).toBe("waiting");
    const callId = first.json.pendingToolCalls[0].callId;
    const answered = await post(session, first.json.turnId, { callId, value: "yes" });
    expect(answered.status).toBe(202);
    expect((await chat(session, { turnId: first.json.turnId })).json).toMatchObject({ status: "completed" });
  });

  // Regression: two tool_use blocks with one id in an Anthropic reply both ran, and the replay
  // carried a duplicate tool_use id and a tool_result answered twice: the provider refused the next
  // request (502 provider_error) and the turn died. (The OpenAI adapter de-duplicates ids itself,
  // AI SDK StreamingToolCallTracker: see the next test.)
  it("duplicate tool_use ids in one Anthropic message both run, and the next request to the provider is valid", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: "dup", name: "exec", input: { code: "return 1" } },
          { id: "dup", name: "exec", input: { code: "return 2" } },
        ],
      },
      { text: "done" },
    ]);
    const r = await chat(session, { model: ANT, messages: user(s.marker) });
    const all = await requests(s.id);
    expect(all[1]?.problems ?? []).toEqual([]);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "completed", message: { content: "done" } });
  });

  it("duplicate ids over the OpenAI wire are made unique; an empty id gets one the client can answer", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: "dup", name: "exec", input: { code: "return 1" } },
          { id: "dup", name: "exec", input: { code: "return 2" } },
        ],
      },
      { text: "done" },
    ]);
    const r = await chat(session, { model: MODEL, messages: user(s.marker) });
    expect(r.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 2, failures: 0 } } });
    const replay = (await requests(s.id))[1]!;
    expect(replay.problems).toEqual([]);
    const ids = toolResults(replay).map((t) => t.id);
    expect(new Set(ids).size).toBe(2);

    const s2 = await script([{ toolCalls: [{ id: "", name: "ask_user", input: { q: 1 } }] }, { text: "ok" }]);
    const w = await chat(session, { model: MODEL, agentId: "off", clientTools: ASK, messages: user(s2.marker) });
    const callId = w.json.pendingToolCalls[0].callId;
    expect(callId).not.toBe("");
    expect((await post(session, w.json.turnId, { callId, value: 1 })).status).toBe(202);
    expect((await chat(session, { turnId: w.json.turnId })).json.status).toBe("completed");
    await expectHealthy(session, r.json.turnId);
  });
});

describe("/chat: tool names and arguments the model chooses", () => {
  it("unknown and prototype-ish tool names are refused as tool errors; the loop and the session go on", async () => {
    const session = sessionId();
    const names = ["__proto__", "constructor", "hasOwnProperty", "toString", "valueOf", "x".repeat(300), "exec ", "EXEC", "wait\u0000", "ask_user"];
    const s = await script([{ toolCalls: names.map((name, i) => ({ id: `n${i}`, name, input: {} })) }, { text: "done" }]);
    const r = await chat(session, { model: MODEL, clientTools: ASK, messages: user(s.marker) });
    expect(r.status).toBe(200);
    // Code mode hides client tools from the model: ask_user called directly is unknown too.
    expect(r.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: names.length, failures: names.length } } });
    const replay = (await requests(s.id))[1]!;
    expect(replay.problems).toEqual([]);
    for (const t of toolResults(replay)) expect(t.content).toMatch(/^error: .* is not one of this turn's tools$/s);
    const t = await trajectory(session, r.json.turnId);
    expect(t.status).toBe(200);
    expect(t.json.calls.every((c: any) => c.status === "refused")).toBe(true);
    await expectHealthy(session, r.json.turnId);
  });

  // Regression: the HTTP edge refuses bodies deeper than MAX_JSON_DEPTH (256), but model-written
  // arguments bypassed that bound: at 20 000 levels the loop died building the next request (a 502
  // blaming the provider, an engine message leaked) and the trajectory answered 500 from then on.
  it("arguments nested 20 000 levels deep are a tool error; the turn completes and its trajectory reads", async () => {
    const session = sessionId();
    const deep = `{"runId": ${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const s = await script([{ toolCalls: [{ id: "d1", name: "wait", input: deep }] }, { text: "done" }]);
    const r = await chat(session, { model: MODEL, messages: user(s.marker) });
    expectNoInternals(r.text);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "completed", message: { content: "done" } });
    const t = await trajectory(session, r.json.turnId);
    expect(t.status).toBe(200);
  });

  it("wait with another turn's or another session's runId (and malformed wait input) fails; the run stays resumable", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: "const a = await ask_user({ q: 1 }); return 'got ' + a;" } }] }]);
    const a = await chat(session, { model: MODEL, clientTools: ASK, messages: user(s.marker) });
    expect(a.json.status).toBe("waiting");
    const { runId, callId } = a.json.pendingToolCalls[0];

    const s2 = await script([
      {
        toolCalls: [
          { id: "w1", name: "wait", input: { runId } },
          { id: "w2", name: "wait", input: { runId, extra: 1 } },
          { id: "w3", name: "wait", input: {} },
          { id: "w4", name: "wait", input: { runId: `cm_${"a".repeat(5000)}` } },
        ],
      },
      { text: "done" },
    ]);
    const b = await chat(session, { model: MODEL, clientTools: ASK, messages: user(s2.marker) });
    expect(b.json.status).toBe("completed");
    const results = toolResults((await requests(s2.id))[1]!).map((t) => JSON.parse(t.content));
    expect(results.map((x) => [x.status, x.code])).toEqual(Array(4).fill(["failed", "invalid_input"]));
    expect(results[0].error).toContain("different turn");

    const other = sessionId();
    const s3 = await script([{ toolCalls: [{ id: "w1", name: "wait", input: { runId } }] }, { text: "done" }]);
    await chat(other, { model: MODEL, messages: user(s3.marker) });
    expect(JSON.parse(toolResults((await requests(s3.id))[1]!)[0]!.content)).toMatchObject({ status: "failed", code: "invalid_input" });

    // Client results for the wrong turn, tenant or session are 404; the right one still lands.
    expect((await post(session, b.json.turnId, { callId, value: "no" })).status).toBe(404);
    expect((await post(session, a.json.turnId, { callId, value: "no" }, TOKEN_B)).status).toBe(404);
    expect((await post(other, a.json.turnId, { callId, value: "no" })).status).toBe(404);
    expect((await post(session, a.json.turnId, { callId, value: "yes" })).status).toBe(202);
    expect(await wait(session, a.json.turnId, runId)).toMatchObject({ status: "completed", value: "got yes" });
  });

  it("300 tool calls in one assistant message all run or are refused, and the replay stays valid", async () => {
    const session = sessionId();
    const calls = Array.from({ length: 300 }, (_, i) =>
      i % 3 === 0
        ? { id: `h${i}`, name: "exec", input: { code: `return ${i}` } }
        : i % 3 === 1
          ? { id: `h${i}`, name: "nope", input: {} }
          : { id: `h${i}`, name: "wait", input: { runId: "cm_x" } },
    );
    const s = await script([{ toolCalls: calls }, { text: "done" }]);
    const r = await chat(session, { model: ANT, messages: user(s.marker) });
    expect(r.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 300, failures: 200 } } });
    const replay = (await requests(s.id))[1]!;
    expect(replay.problems).toEqual([]);
    expect(toolResults(replay)).toHaveLength(300);
    const t = await trajectory(session, r.json.turnId);
    expect(t.json.calls).toHaveLength(300);
    await expectHealthy(session, r.json.turnId);
  });

  it("tool calls that arrive with finishReason length run normally", async () => {
    for (const model of [MODEL, ANT]) {
      const s = await script([{ toolCalls: [{ id: "l1", name: "exec", input: { code: "return 5" } }], finishReason: "length" }, { text: "done" }]);
      const r = await chat(sessionId(), { model, messages: user(s.marker) });
      expect(r.json).toMatchObject({ status: "completed", message: { content: "done" } });
      expect(JSON.parse(toolResults((await requests(s.id))[1]!)[0]!.content)).toMatchObject({ status: "completed", value: 5 });
    }
  });
});
