import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { sessionId, sessionStub, TOKEN_A, TOKEN_B } from "./helpers";
import { appendSteps, arrived, requests, script, toolResults } from "./chat-helpers";
import { ASK_CODE, openai, parkedRunId } from "./facade-helpers";

// The facades under a hostile client, tenant and provider: requests the SDKs would never send
// (raw bodies through SELF.fetch), another tenant replaying a conversation, a provider that echoes
// its key or reports absurd usage, a client that leaves mid-stream.

const MODEL = "fakeoai/gpt-fake";
const ASK_TOOL = {
  type: "function" as const,
  function: { name: "ask_user", description: "Ask the user", parameters: { type: "object", properties: { question: { type: "string" } } } },
};

async function post(path: string, body: unknown, opts: { token?: string; session?: string } = {}) {
  const res = await SELF.fetch(`http://gateway${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${opts.token ?? TOKEN_A}`,
      ...(opts.session ? { "x-session-id": opts.session } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** A conversation whose cell is parked on ask_user: the first answer's assistant message and its call. */
async function parkedConversation(session?: string) {
  const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ASK_CODE } }] }]);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: `${s.marker} greet me` }];
  const { data, response } = await openai(session ? { session } : {})
    .chat.completions.create({ model: MODEL, messages, tools: [ASK_TOOL] })
    .withResponse();
  const assistant = data.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam;
  const call = data.choices[0]!.message.tool_calls![0]!;
  return { s, messages, assistant, call, session: response.headers.get("x-session-id")! };
}

/** The follow-up answering the parked call with `name` resumes the program with it: nothing before it was delivered. */
async function resumesWith(c: Awaited<ReturnType<typeof parkedConversation>>, name: string, opts: { session?: string } = { session: c.session }) {
  const runId = await parkedRunId(c.session);
  await appendSteps(c.s.id, [{ toolCalls: [{ id: "w1", name: "wait", input: { runId } }] }, { text: "ok" }]);
  const follow = { model: MODEL, messages: [...c.messages, c.assistant, { role: "tool", tool_call_id: c.call.id, content: name }] };
  const res = await post("/v1/chat/completions", follow, opts);
  expect(res.status).toBe(200);
  const waited = toolResults((await requests(c.s.id)).at(-1)!).find((t) => t.id === "w1")!;
  expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: `Hello, ${name}` });
}

describe("facade tenants and call ids", () => {
  it("another tenant replaying a follow-up, derived or with the session id the owner got, is a 404; the owner's run then completes", async () => {
    const { s, messages, assistant, call, session } = await parkedConversation();
    const follow = (content: string) => ({
      model: MODEL,
      messages: [...messages, assistant, { role: "tool", tool_call_id: call.id, content }],
    });
    const derived = await post("/v1/chat/completions", follow("Eve"), { token: TOKEN_B });
    expect(derived.status).toBe(404);
    expect(derived.json.error).toMatchObject({ code: "not_found", param: "messages" });
    const named = await post("/v1/chat/completions", follow("Eve"), { token: TOKEN_B, session });
    expect(named.status).toBe(404);
    // Tenant B's attempts delivered nothing: A's result is the one the program continues with.
    const runId = await parkedRunId(session);
    await appendSteps(s.id, [{ toolCalls: [{ id: "w1", name: "wait", input: { runId } }] }, { text: "ok" }]);
    const mine = await post("/v1/chat/completions", follow("Ada"));
    expect(mine.status).toBe(200);
    const waited = toolResults((await requests(s.id)).at(-1)!).find((t) => t.id === "w1")!;
    expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: "Hello, Ada" });
  });

  it("a real call id beside one no turn handed out is a 404 naming the stranger, not a 409; the real one is still open", async () => {
    const c = await parkedConversation(sessionId());
    const { messages, assistant, call, session } = c;
    const forged = {
      ...assistant,
      tool_calls: [...(assistant as OpenAI.Chat.ChatCompletionAssistantMessageParam).tool_calls!, { ...call, id: "call_fabricated" }],
    };
    const mixed = await post(
      "/v1/chat/completions",
      {
        model: MODEL,
        messages: [
          ...messages,
          forged,
          { role: "tool", tool_call_id: call.id, content: "Eve" },
          { role: "tool", tool_call_id: "call_fabricated", content: "x" },
        ],
      },
      { session },
    );
    expect(mixed.status).toBe(404);
    expect(mixed.json.error).toMatchObject({
      code: "not_found",
      message: "unknown tool call id call_fabricated: no turn of this conversation is waiting on it",
    });
    // Nothing was delivered: the honest follow-up resumes with its own result.
    await resumesWith(c, "Ada");
  });

  it("two results for one call are a 400 that delivers neither; the corrected follow-up resumes with its result", async () => {
    const c = await parkedConversation(sessionId());
    const { messages, assistant, call, session } = c;
    const twice = await post(
      "/v1/chat/completions",
      {
        model: MODEL,
        messages: [
          ...messages,
          assistant,
          { role: "tool", tool_call_id: call.id, content: "Ada" },
          { role: "tool", tool_call_id: call.id, content: "Eve" },
        ],
      },
      { session },
    );
    expect(twice.status).toBe(400);
    expect(twice.json.error).toMatchObject({ code: "invalid_request", param: "messages" });
    expect(twice.json.error.message).toContain(call.id);
    await resumesWith(c, "Eve");
  });
});

describe("facade requests no SDK would send", () => {
  it("x-session-id . or .. is refused (no /v1 path could reach that session: a URL resolves them away); ... is a session", async () => {
    for (const session of [".", ".."]) {
      for (const path of ["/v1/chat/completions", "/v1/messages"]) {
        const r = await post(path, { model: MODEL, max_tokens: 5, messages: [{ role: "user", content: "x" }] }, { session });
        expect(r.status).toBe(400);
        expect(r.text).toContain("x-session-id must be 1-128 characters of [A-Za-z0-9._-], not . or ..");
      }
    }
    const s = await script([{ text: "fine" }]);
    const ok = await post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: `${s.marker} x` }] }, { session: "..." });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-session-id")).toBe("...");
  });

  it("client tools named like control tools are refused; named like guest globals they leave catalog, API, MCP and namespaces intact", async () => {
    for (const name of ["exec", "wait"]) {
      const r = await post("/v1/chat/completions", {
        model: MODEL,
        messages: [{ role: "user", content: "x" }],
        tools: [{ type: "function", function: { name, parameters: { type: "object" } } }],
      });
      expect(r.status).toBe(400);
      expect(r.json.error.message).toContain("code-mode control tool");
    }
    const globals = ["catalog", "API", "MCP", "namespaces", "__proto__"];
    const s = await script([
      {
        toolCalls: [
          {
            id: "e1",
            name: "exec",
            input: {
              code: "return [typeof catalog.search, typeof API.read, typeof MCP, typeof namespaces, Object.getPrototypeOf({}) === Object.prototype]",
            },
          },
        ],
      },
      { text: "done" },
    ]);
    const r = await post("/v1/chat/completions", {
      model: MODEL,
      messages: [{ role: "user", content: `${s.marker} x` }],
      tools: globals.map((name) => ({ type: "function", function: { name, description: "hostile", parameters: { type: "object" } } })),
    });
    expect(r.status).toBe(200);
    const result = JSON.parse(toolResults((await requests(s.id))[1]!)[0]!.content);
    expect(result).toMatchObject({ status: "completed", value: ["function", "function", "object", "object", true] });
  });

  it("nesting past the bound in tool-call arguments or a tool_use input is a 400 in the format's envelope; an oversized schema a 413", async () => {
    const deep = "[".repeat(5000) + "]".repeat(5000);
    const openaiBody = `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{"a":${deep}}}}]},{"role":"tool","tool_call_id":"c1","content":"x"},{"role":"user","content":"again"}]}`;
    const o = await post("/v1/chat/completions", openaiBody);
    expect(o.status).toBe(400);
    expect(o.json.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
    const anthropicBody = `{"model":"fakeant/claude-fake","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{"a":${deep}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"x"}]}]}`;
    const a = await post("/v1/messages", anthropicBody);
    expect(a.status).toBe(400);
    expect(a.json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const schema = `{"type":"object","properties":{"a":${'{"type":"array","items":'.repeat(60000)}{}${"}".repeat(60000)}}}`;
    const big = await post(
      "/v1/chat/completions",
      `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`,
    );
    expect(big.status).toBe(413);
    expect(big.json.error).toMatchObject({ code: "payload_too_large" });
    for (const r of [o, a, big]) expect(r.text).not.toMatch(/\n\s+at |\.ts:\d+/);
  });
});

describe("facades over a hostile provider", () => {
  it("absurd usage numbers reach the client as exact integers: the sums saturate instead of passing 2^53", async () => {
    const s = await script([{ text: "hi", rawUsage: { openai: '{"prompt_tokens":1e400,"completion_tokens":9007199254740993}' } }]);
    const r = await post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: `${s.marker} x` }] });
    expect(r.status).toBe(200);
    for (const n of [r.json.usage.prompt_tokens, r.json.usage.completion_tokens, r.json.usage.total_tokens])
      expect(Number.isSafeInteger(n)).toBe(true);
    expect(r.json.usage.total_tokens).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("a provider error echoing its key reaches the client masked, in the envelope, streamed or not", async () => {
    const KEY = "fake-key-openai";
    for (const stream of [false, true]) {
      const s = await script([{ error: { status: 500, message: `upstream broke for key ${KEY}` } }]);
      const r = await post("/v1/chat/completions", { model: MODEL, stream, messages: [{ role: "user", content: `${s.marker} x` }] });
      // Streamed, the failure is the stream's error event (the SDKs raise it); else the envelope with a 502.
      expect(r.status).toBe(stream ? 200 : 502);
      expect(stream ? JSON.parse(/^data: (\{"error".*)$/m.exec(r.text)![1]!).error : r.json.error).toMatchObject({ type: "server_error" });
      expect(r.text).not.toContain(KEY);
    }
  });
});

describe("a streamed follow-up whose client leaves", () => {
  it("cancelled mid-answer (the Worker's cancelRequest on disconnect), the same follow-up retried continues the turn and answers", async () => {
    const { s, messages, assistant, call, session } = await parkedConversation(sessionId());
    const runId = await parkedRunId(session);
    await appendSteps(s.id, [{ toolCalls: [{ id: "w1", name: "wait", input: { runId } }] }, { hangMs: 5000, text: "Gree" }, { text: "Greeted." }]);
    const follow = { model: MODEL, messages: [...messages, assistant, { role: "tool", tool_call_id: call.id, content: "Ada" }], tools: [ASK_TOOL] };
    const res = await SELF.fetch("http://gateway/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN_A}`, "x-session-id": session },
      body: JSON.stringify({ ...follow, stream: true }),
    });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const requestId = /chatcmpl-([0-9a-f-]+)/.exec(first)![1]!;
    // Cancelled as soon as the provider has been asked the third time (the model call after the
    // resumed cell): `arrived`, not `requests`, which answers only once that call has ended.
    for (let i = 0; i < 200 && (await arrived(s.id)) < 3; i++) await new Promise((r) => setTimeout(r, 25));
    // Local workerd does not deliver client disconnects to request.signal: do what the Worker does on one.
    await (sessionStub(session) as any).cancelRequest(requestId);
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toContain('"code":"aborted"');
    const retry = await post("/v1/chat/completions", follow, { session });
    expect(retry.status).toBe(200);
    expect(retry.json.choices[0].message.content).toBe("Greeted.");
    // The program finished before the cancel: its value reached the model, taken once.
    const all = await requests(s.id);
    // The cancel closed the stalled model call: the provider saw its client go away.
    expect(all[2]!.aborted).toBe(true);
    const waited = toolResults(all.at(-1)!).find((t) => t.id === "w1")!;
    expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: "Hello, Ada" });
  });
});
