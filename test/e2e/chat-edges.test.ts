import { runDurableObjectAlarm, SELF } from "cloudflare:test";
import { inject, describe, expect, it } from "vitest";
import { api, sessionId, sessionStub, sleep } from "./helpers";
import { setClock, setSessionEnv } from "./session-controls";
import { manualClock } from "../../src/runtime";
import { mark, recordsSince } from "../support/log-capture";
import { appendSteps, chat, offeredTools, parseSse, requests, script, toolResults } from "./chat-helpers";
import { wireNames } from "../../src/providers/wire-names";
import { readEvents, type ChatEvent } from "../../src/agent";

const MODEL = "fakeoai/gpt-fake";
const ANT = "fakeant/claude-fake";

async function until<T>(what: string, fn: () => Promise<T | undefined>, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("/chat streams server-sent events", () => {
  it("in order: turn, text deltas, assistant turn, tool call start, nested calls, tool call end, …, done", async () => {
    const session = sessionId();
    const s = await script([
      {
        text: ["Checking", " now."],
        toolCalls: [
          { id: "c1", name: "exec", input: { code: "const a = await echo({ value: 1 }); const b = await echo({ value: 2 }); return a + b;" } },
        ],
      },
      { text: ["The sum ", "is 3."] },
    ]);
    const res = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} add` }] }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = parseSse(res.text);
    expect(events.map((e) => e.event)).toEqual([
      "turn",
      "text",
      "text",
      "assistant_turn",
      "tool_call_start",
      "nested_call",
      "nested_call",
      "tool_call_end",
      "text",
      "text",
      "assistant_turn",
      "done",
    ]);
    expect(
      events
        .filter((e) => e.event === "text")
        .map((e) => e.data.delta)
        .join(""),
    ).toBe("Checking now.The sum is 3.");
    expect(events[5]!.data).toMatchObject({ parentCallId: "c1", tool: "echo", ok: true });
    expect(events[7]!.data).toMatchObject({ callId: "c1", name: "exec", status: "completed", untrusted: false });
    expect(JSON.parse(events[7]!.data.result)).toMatchObject({ status: "completed", value: 3 });
    expect(events.at(-1)!.data.answer).toMatchObject({ status: "completed", message: { content: "The sum is 3." } });
  });

  it("a request refused before the loop is a plain HTTP error even when SSE was asked for", async () => {
    const res = await chat(sessionId(), { model: "fakeoai/nope", messages: [{ role: "user", content: "x" }] }, { accept: "text/event-stream" });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("invalid_request");
  });
});

describe("/chat: provider failures are clear turn errors, never a 500", () => {
  it("401 from the provider → 502 provider_error with the provider's status and message", async () => {
    const s = await script([{ error: { status: 401, message: "Incorrect API key provided" } }]);
    const r = await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} hi` }] });
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: "provider_error", providerStatus: 401 });
    expect(r.json.error.message).toContain("Incorrect API key");
    expect(r.json.turnId).toBeDefined();
  });

  it("429 with retry-after → 429 provider_rate_limited with Retry-After; the transcript so far is kept", async () => {
    const session = sessionId();
    const s = await script([
      { toolCalls: [{ id: "a", name: "exec", input: { code: "return 1" } }] },
      { error: { status: 429, message: "Rate limit reached", headers: { "retry-after": "7" } } },
    ]);
    const r = await chat(session, { model: ANT, messages: [{ role: "user", content: `${s.marker} hi` }] });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("7");
    expect(r.json.error).toMatchObject({ code: "provider_rate_limited", providerStatus: 429, retryAfterSeconds: 7 });
    expect(r.json.meta).toMatchObject({ assistantTurns: 1, toolSummary: { calls: 1 } });
    const t = await api("GET", `/v1/sessions/${session}/turns/${r.json.turnId}/trajectory`);
    expect(t.json.status).toBe("stopped");
    expect(t.json.calls).toHaveLength(1);
    expect(t.json.limitsHit.map((l: any) => l.limit)).toContain("provider_rate_limited");
  });

  it("500 and a broken stream → provider_unavailable (502)", async () => {
    for (const step of [{ error: { status: 500, message: "overloaded" } }, { malformed: true as const }]) {
      const s = await script([step]);
      const r = await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} hi` }] });
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe("provider_unavailable");
    }
  });

  it("a missing provider secret is refused before any turn opens", async () => {
    const r = await chat(sessionId(), { model: "fakeoai/gpt-fake-nosecret", messages: [{ role: "user", content: "hi" }] });
    expect([400]).toContain(r.status);
  });
});

describe("/chat: cancellation", () => {
  it("cancelling the request cancels the model call; the turn stops and the provider sees the connection go", async () => {
    const session = sessionId();
    const s = await script([{ hangMs: 20_000 }]);
    const stub = sessionStub(session) as any;
    const stream: ReadableStream<Uint8Array> = await stub.chat(
      "tenant-a",
      session,
      { model: MODEL, messages: [{ role: "user", content: `${s.marker} hang` }], maxAssistantTurns: 4 },
      "chat-cancel-1",
    );
    const events: ChatEvent[] = [];
    const reading = (async () => {
      for await (const e of readEvents(stream)) events.push(e);
    })();
    await until("the provider received the request", async () => ((await requests(s.id)).length > 0 ? true : undefined));
    await stub.cancelRequest("chat-cancel-1");
    await reading;
    expect(events.at(-1)).toMatchObject({ type: "error", error: { code: "aborted" } });
    await until("the provider saw the abort", async () => ((await requests(s.id))[0]?.aborted ? true : undefined));
  });

  it("an SSE client that stops reading cancels a running cell: it fails with aborted and nothing after it runs", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          {
            id: "slow",
            name: "exec",
            input: { code: "await echo({ value: 1, delayMs: 20000 }); await notes_write({ key: 'after', text: 'x' }); return 1;" },
          },
        ],
      },
    ]);
    const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer test-token-a", accept: "text/event-stream" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }] }),
    });
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes("tool_call_start")) seen += new TextDecoder().decode((await reader.read()).value);
    const turnId = parseSse(seen)[0]!.data.turnId as string;
    await reader.cancel();
    const t = await until("the exec ended", async () => {
      const r = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
      return r.json.calls[0]?.status ? r.json : undefined;
    });
    expect(t.calls[0]).toMatchObject({ tool: "exec", status: "failed", code: "aborted" });
    expect(t.status).toBe("stopped");
    await sleep(200);
    const notes = await api("POST", `/v1/sessions/${session}/turns`, {});
    const check = await api("POST", `/v1/sessions/${session}/turns/${notes.json.turnId}/tools/exec`, {
      code: "return await notes_read({ key: 'after' })",
    });
    expect(check.json.value).toEqual([]);
  });
});

describe.each([MODEL, ANT])("/chat with %s: catalog names a provider would refuse travel as aliases", (model) => {
  it("a direct MCP tool of a server named 'my.tools' is offered, called and answered under a valid name; the gateway sees the real one", async () => {
    const url = inject("mcpEverythingUrl" as never) as unknown as string;
    const real = "my.tools__echo";
    const alias = wireNames([{ name: real, description: "", parameters: {} }], []).toWire(real);
    expect(alias).toMatch(/^my_tools__echo_[0-9a-f]{8}$/);
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "w1", name: alias, input: { message: "hi there" } }] }, { text: "echoed" }]);
    const r = await chat(session, {
      model,
      agentId: "off",
      mcpServers: { "my.tools": { url } },
      messages: [{ role: "user", content: `${s.marker} echo` }],
    });
    expect(r.json).toMatchObject({ status: "completed", message: { content: "echoed" } });
    const reqs = await requests(s.id);
    expect(reqs.flatMap((q) => q.problems)).toEqual([]);
    expect(offeredTools(reqs[0]!)).toContain(alias);
    expect(offeredTools(reqs[0]!)).not.toContain(real);
    expect(toolResults(reqs[1]!)[0]!.content).toContain("hi there");
    const t = await api("GET", `/v1/sessions/${session}/turns/${r.json.turnId}/trajectory`);
    expect(t.json.calls[0]).toMatchObject({ tool: real, status: "completed" });
  });
});

describe("/chat sampling: temperature, topP, maxOutputTokens", () => {
  it.each([
    [MODEL, "openai"],
    ["fakeant/messages-fake", "anthropic"],
  ])("%s: sent with every model call of the turn, continuations included, in the wire format's own fields", async (model, wire) => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "q1", name: "ask_user", input: { q: "name?" } }] }, { text: "thanks" }]);
    const ask = [{ name: "ask_user", parameters: { type: "object", properties: { q: { type: "string" } } } }];
    const first = await chat(session, {
      model,
      agentId: "off",
      clientTools: ask,
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 321,
      messages: [{ role: "user", content: `${s.marker} hi` }],
    });
    expect(first.json.status).toBe("waiting");
    const turnId = first.json.turnId;
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: first.json.pendingToolCalls[0].callId, value: "Ada" });
    expect((await chat(session, { turnId })).json).toMatchObject({ status: "completed" });
    const reqs = await requests(s.id);
    expect(reqs).toHaveLength(2);
    for (const r of reqs) {
      expect(r.problems).toEqual([]);
      expect(r.body).toMatchObject({ temperature: 0.3, top_p: 0.9 });
      expect(wire === "anthropic" ? r.body.max_tokens : (r.body.max_completion_tokens ?? r.body.max_tokens)).toBe(321);
    }
  });

  it("maxOutputTokens is lowered to the model row's maxTokens", async () => {
    const s = await script([{ text: "short" }]);
    const r = await chat(sessionId(), {
      model: "fakeoai/gpt-fake-small",
      maxOutputTokens: 50_000,
      messages: [{ role: "user", content: `${s.marker} hi` }],
    });
    expect(r.json.status).toBe("completed");
    const [req] = await requests(s.id);
    expect(req!.body.max_completion_tokens ?? req!.body.max_tokens).toBe(1000);
  });

  it("a current Claude model takes no sampling parameters: temperature and topP are not sent to it, maxOutputTokens is", async () => {
    const s = await script([{ text: "hello" }]);
    const r = await chat(sessionId(), {
      model: ANT,
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 222,
      messages: [{ role: "user", content: `${s.marker} hi` }],
    });
    expect(r.json.status).toBe("completed");
    const [req] = await requests(s.id);
    expect(req!.body.temperature).toBeUndefined();
    expect(req!.body.top_p).toBeUndefined();
    expect(req!.body.max_tokens).toBe(222);
  });

  it("bad values are 400 naming the field; a continuation cannot change them; the Messages API's temperature bound is checked", async () => {
    const base = { model: MODEL, messages: [{ role: "user", content: "hi" }] };
    for (const [body, path] of [
      [{ ...base, temperature: 2.5 }, "temperature"],
      [{ ...base, temperature: "hot" }, "temperature"],
      [{ ...base, topP: 0 }, "topP"],
      [{ ...base, maxOutputTokens: 1.5 }, "maxOutputTokens"],
      [{ turnId: "00000000-0000-4000-8000-000000000000", temperature: 1 }, "temperature"],
    ] as const) {
      const r = await chat(sessionId(), body);
      expect(r.status).toBe(400);
      expect(r.json.error.path).toBe(path);
    }
    const session = sessionId();
    const r = await chat(session, { model: ANT, temperature: 1.5, messages: [{ role: "user", content: "hi" }] });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toBe(`temperature must be from 0 to 1 for ${ANT} (Anthropic Messages)`);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(404);
  });
});

describe("/chat: the loop's own bounds", () => {
  it("tool arguments that are not JSON come back to the model as an error it can correct", async () => {
    const s = await script([{ toolCalls: [{ id: "bad", name: "exec", input: "{not json" }] }, { text: "sorry" }]);
    const r = await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} x` }] });
    expect(r.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 1, failures: 1 } } });
    const [result] = toolResults((await requests(s.id))[1]!);
    expect(result!.content).toContain("not a JSON object");
  });

  it("maxAssistantTurns stops a model that never answers", async () => {
    const step = { toolCalls: [{ id: "again", name: "exec", input: { code: "return 1" } }] };
    const s = await script([{ ...step }, { ...step, toolCalls: [{ id: "again2", name: "exec", input: { code: "return 2" } }] }]);
    const r = await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} loop` }], maxAssistantTurns: 2 });
    expect(r.json).toMatchObject({ status: "completed", meta: { assistantTurns: 2, stopReason: "max_assistant_turns" } });
    expect(await requests(s.id)).toHaveLength(2);
  });
});

describe("/chat: CODEMODE_DEBUG transport, payload and SSE logging", () => {
  it("transport logs request and response, payload=full-redacted a redacted snapshot, sse=peek the first five provider events", async () => {
    const session = sessionId();
    await api("POST", `/v1/sessions/${session}/turns`, { disableTools: true });
    setSessionEnv(session, { CODEMODE_DEBUG: "transport,payload=full-redacted,sse=peek" });
    const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
    const s = await script([{ text: ["a", "b", "c", "d", "e", "f", "g", "h"] }]);
    const m = mark();
    const r = await chat(session, { model: MODEL, messages: [{ role: "user", content: `${s.marker} my key is ${secret}` }] });
    expect(r.json.message.content).toBe("abcdefgh");
    // The turn's surface (logged when /chat opens it), then the provider transport of the one model call.
    const debug = recordsSince(m).filter((x) => x.kind === "debug" && x.turnId === r.json.turnId && x.requestId !== undefined);
    expect(debug.map((x) => x.event)).toEqual([
      "model_request",
      "model_payload",
      "model_response",
      "model_sse",
      "model_sse",
      "model_sse",
      "model_sse",
      "model_sse",
    ]);
    expect(debug[0]).toMatchObject({ url: expect.stringContaining("/v1/chat/completions"), bytes: expect.any(Number) });
    expect(debug[1]!.toolNames.sort()).toEqual(["exec", "wait"]);
    expect(debug[1]!.payload).toContain("my key is");
    expect(debug[2]).toMatchObject({ status: 200 });
    expect(debug.filter((x) => x.event === "model_sse").map((x) => x.n)).toEqual([1, 2, 3, 4, 5]);
    const all = JSON.stringify(recordsSince(m));
    expect(all).not.toContain(secret);
    expect(all).not.toContain("fake-key-openai");
  });
});

describe("/chat: partial updates of running tools", () => {
  it("a nested tool's progress is streamed as a transient tool_update event under its parent call", async () => {
    const s = await script([
      { toolCalls: [{ id: "u1", name: "exec", input: { code: "return await echo({ value: 7, delayMs: 200 })" } }] },
      { text: "ok" },
    ]);
    const res = await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }] }, { accept: "text/event-stream" });
    const events = parseSse(res.text);
    const names = events.map((e) => e.event);
    const update = events.find((e) => e.event === "tool_update")!;
    expect(update.data).toMatchObject({ parentCallId: "u1", tool: "echo", invocationId: expect.stringMatching(/^call_/) });
    expect(JSON.parse(update.data.partial)).toEqual({ progress: 0.5, waitedMs: 100 });
    expect(names.indexOf("tool_update")).toBeGreaterThan(names.indexOf("tool_call_start"));
    expect(names.indexOf("tool_update")).toBeLessThan(names.indexOf("nested_call"));
  });
});

describe("/chat over a Tool Search turn", () => {
  it("the model searches, then calls a hidden tool through tool_call; meta counts the bridge and the prompt bytes", async () => {
    const s = await script([
      { toolCalls: [{ id: "s1", name: "tool_search", input: { query: "list shipments" } }] },
      { toolCalls: [{ id: "s2", name: "tool_call", input: { id: "plugin:demo:shipping_list", args: {} } }] },
      { text: "found them" },
    ]);
    const r = await chat(sessionId(), { model: MODEL, agentId: "searchtools", messages: [{ role: "user", content: `${s.marker} shipments` }] });
    expect(r.json).toMatchObject({
      status: "completed",
      message: { content: "found them" },
      meta: {
        codeModeEngaged: false,
        assistantTurns: 3,
        bridgeCalls: { search: 1, call: 1 },
        toolSummary: { calls: 2, tools: ["tool_search", "tool_call"] },
      },
    });
    const all = await requests(s.id);
    expect(all[0]!.body.tools.map((t: any) => t.function.name).sort()).toEqual(["tool_call", "tool_describe", "tool_search"]);
    const bodies = all.reduce((n, req) => n + new TextEncoder().encode(JSON.stringify(req.body)).length, 0);
    expect(r.json.meta.promptBytes).toBeGreaterThanOrEqual(bodies * 0.9);
    const [found] = toolResults(all[2]!).slice(-1);
    expect(JSON.parse(found!.content)).toMatchObject({ status: "completed" });
  });
});

describe("/chat: a waiting turn whose parked run expired", () => {
  it("continues without the client result (it can no longer be delivered); the model learns the run expired; the trajectory says so", async () => {
    const session = sessionId();
    const clock = manualClock(Date.now());
    await api("POST", `/v1/sessions/${session}/turns`, {}); // create the object
    setClock(clock);
    const s = await script([{ toolCalls: [{ id: "p1", name: "exec", input: { code: "return await ask_user({ q: 1 })" } }] }]);
    const first = await chat(session, {
      model: MODEL,
      agentId: "park",
      clientTools: [{ name: "ask_user" }],
      messages: [{ role: "user", content: `${s.marker} ask` }],
    });
    expect(first.json.status).toBe("waiting");
    const { runId } = first.json.pendingToolCalls[0];
    clock.advance(61_000); // past the park agent's 60 s snapshot TTL
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    await appendSteps(s.id, [{ toolCalls: [{ id: "p2", name: "wait", input: { runId } }] }, { text: "the question expired" }]);
    const again = await chat(session, { turnId: first.json.turnId });
    expect(again.json).toMatchObject({ status: "completed", message: { content: "the question expired" } });
    const [, waitResult] = toolResults((await requests(s.id))[2]!);
    expect(JSON.parse(waitResult!.content)).toMatchObject({
      status: "failed",
      code: "invalid_input",
      error: "code mode run is unavailable or expired.",
    });
    const t = await api("GET", `/v1/sessions/${session}/turns/${first.json.turnId}/trajectory`);
    expect(t.json.snapshots.map((e: any) => e.event)).toEqual(["parked", "expired", "unavailable"]);
  });
});
