import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { sessionId, sessionStub, TOKEN_B } from "./helpers";
import { appendSteps, requests, script, toolResults } from "./chat-helpers";
import { ASK_CODE, openai, parkedRunId } from "./facade-helpers";

// POST /v1/chat/completions driven by the official `openai` package (its own parsing, stream
// helpers and error classes), over the real path: Worker → session object → agent loop → the fake
// provider speaking the OpenAI wire format.

const MODEL = "fakeoai/gpt-fake";
const USAGE = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 };
const ASK_TOOL = {
  type: "function" as const,
  function: { name: "ask_user", description: "Ask the user", parameters: { type: "object", properties: { question: { type: "string" } } } },
};

describe("/v1/chat/completions with the openai client", () => {
  it("runs exec inside the gateway and answers only the final message, with the whole turn's usage", async () => {
    const s = await script([
      { text: "Let me compute.", toolCalls: [{ id: "e1", name: "exec", input: { code: "return 6 * 7" } }], usage: USAGE },
      { text: "The answer is 42.", usage: USAGE },
    ]);
    const { data, response } = await openai()
      .chat.completions.create({ model: MODEL, messages: [{ role: "user", content: `${s.marker} what is 6*7?` }], temperature: 0.5 })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.choices[0]!.message).toMatchObject({ role: "assistant", content: "The answer is 42." });
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(data.usage).toMatchObject({ prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 });
    expect(response.headers.get("x-session-id")).toMatch(/^fx-/);
    const reqs = await requests(s.id);
    expect(reqs).toHaveLength(2);
    // The model saw code mode; the exec result (42) reached it; the sampling field was passed on.
    expect(reqs[0]!.body.tools.map((t: any) => t.function.name).sort()).toEqual(["exec", "wait"]);
    expect(toolResults(reqs[1]!)[0]!.content).toContain("42");
    expect(reqs[0]!.body.temperature).toBe(0.5);
  });

  it("streams through the SDK's stream helper: content chunks, a final usage chunk, [DONE]", async () => {
    const s = await script([{ text: ["Hel", "lo ", "there"], usage: USAGE }]);
    const stream = openai().chat.completions.stream({
      model: MODEL,
      messages: [{ role: "user", content: `${s.marker} hi` }],
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    stream.on("content", (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe("Hello there");
    expect(final.choices[0]!.finish_reason).toBe("stop");
    expect(final.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 });
    expect(deltas.join("")).toBe("Hello there");
  });

  it("done-when: a client tool round trip across two requests (and an eviction) completes the original program", async () => {
    const session = sessionId();
    const client = openai({ session });
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ASK_CODE } }], usage: USAGE }]);
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "system", content: "You greet people." },
      { role: "user", content: `${s.marker} greet me` },
    ];
    const first = await client.chat.completions.create({ model: MODEL, messages, tools: [ASK_TOOL] });
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const [call] = first.choices[0]!.message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
    expect(call).toMatchObject({ type: "function", function: { name: "ask_user" } });
    expect(JSON.parse(call!.function.arguments)).toEqual({ question: "Name?" });
    // The model never saw ask_user: it is hidden in the catalog, the cell called it.
    expect((await requests(s.id))[0]!.body.tools.map((t: any) => t.function.name).sort()).toEqual(["exec", "wait"]);

    const runId = await parkedRunId(session);
    await appendSteps(s.id, [
      { toolCalls: [{ id: "w1", name: "wait", input: { runId } }], usage: USAGE },
      { text: "Greeted Ada.", usage: USAGE },
    ]);
    await evictDurableObject(sessionStub(session));

    const followUp: OpenAI.Chat.ChatCompletionMessageParam[] = [
      ...messages,
      first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam,
      { role: "tool", tool_call_id: call!.id, content: "Ada" },
    ];
    const second = await client.chat.completions.create({ model: MODEL, messages: followUp, tools: [ASK_TOOL] });
    expect(second.choices[0]!.message.content).toBe("Greeted Ada.");
    // Usage is the whole turn's: three model calls over the two requests.
    expect(second.usage).toMatchObject({ prompt_tokens: 300, completion_tokens: 60 });
    const waited = toolResults((await requests(s.id)).at(-1)!).find((t) => t.id === "w1")!;
    expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: "Hello, Ada" });

    // The same follow-up again: the turn has moved on — a 409 the SDK raises as its ConflictError.
    const replay = await client.chat.completions.create({ model: MODEL, messages: followUp, tools: [ASK_TOOL] }).catch((e) => e);
    expect(replay).toBeInstanceOf(OpenAI.ConflictError);
    expect(replay.status).toBe(409);
    expect(replay.error).toMatchObject({ type: "invalid_request_error", code: "conflict", param: "messages" });
  });

  it("several client calls of one cell arrive as one message; the follow-up must answer all of them", async () => {
    const s = await script([
      {
        toolCalls: [
          {
            id: "e1",
            name: "exec",
            input: { code: "const [a, b] = await Promise.all([ask_user({ question: 'a' }), ask_user({ question: 'b' })]); return a + b;" },
          },
        ],
      },
    ]);
    const client = openai();
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: `${s.marker} add` }];
    const { data: first, response } = await client.chat.completions.create({ model: MODEL, messages, tools: [ASK_TOOL] }).withResponse();
    const calls = first.choices[0]!.message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((c) => JSON.parse(c.function.arguments).question).sort()).toEqual(["a", "b"]);
    const assistant = first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam;

    const partial = await client.chat.completions
      .create({ model: MODEL, messages: [...messages, assistant, { role: "tool", tool_call_id: calls[0]!.id, content: "3" }] })
      .catch((e) => e);
    expect(partial).toBeInstanceOf(OpenAI.BadRequestError);
    expect(partial.message).toContain(calls[1]!.id);

    // No x-session-id: the follow-ups reach the session derived from the conversation.
    const runId = await parkedRunId(response.headers.get("x-session-id")!);
    await appendSteps(s.id, [{ toolCalls: [{ id: "w1", name: "wait", input: { runId } }] }, { text: "seven" }]);
    const done = await client.chat.completions.create({
      model: MODEL,
      messages: [
        ...messages,
        assistant,
        { role: "tool", tool_call_id: calls[0]!.id, content: "3" },
        { role: "tool", tool_call_id: calls[1]!.id, content: "4" },
      ],
    });
    expect(done.choices[0]!.message.content).toBe("seven");
    const waited = toolResults((await requests(s.id)).at(-1)!).find((t) => t.id === "w1")!;
    // JSON tool results reach the cell as values: 3 + 4.
    expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: 7 });
  });

  it("errors arrive as the SDK's own classes with the right status", async () => {
    const client = openai();
    const unknown = await client.chat.completions.create({ model: "nope/none", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.error).toMatchObject({ code: "model_not_found", param: "model", type: "invalid_request_error" });

    const bad = await client.chat.completions.create({ model: MODEL, messages: [{ role: "robot", content: "hi" } as any] }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.error).toMatchObject({ param: "messages[0].role" });

    const limited = await script([{ error: { status: 429, message: "slow down", headers: { "retry-after": "7" } } }]);
    const rate = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: `${limited.marker} hi` }] })
      .catch((e) => e);
    expect(rate).toBeInstanceOf(OpenAI.RateLimitError);
    expect(rate.headers.get("retry-after")).toBe("7");

    const broken = await script([{ error: { status: 500, message: "upstream broke" } }]);
    const failed = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: `${broken.marker} hi` }] })
      .catch((e) => e);
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    expect(failed.status).toBe(502);

    const denied = await openai({ token: "not-a-token-at-all" })
      .chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(denied.error).toMatchObject({ type: "authentication_error" });

    const forged = await client.chat.completions
      .create({
        model: MODEL,
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_9_deadbeef", type: "function", function: { name: "ask_user", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "call_9_deadbeef", content: "x" },
        ],
      })
      .catch((e) => e);
    expect(forged).toBeInstanceOf(OpenAI.NotFoundError);
    expect(forged.message).toContain("call_9_deadbeef");
  });

  it("tenants never meet: another tenant's follow-up with the same session id and call id is a 404", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ASK_CODE } }] }]);
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: `${s.marker} greet me` }];
    const first = await openai({ session }).chat.completions.create({ model: MODEL, messages, tools: [ASK_TOOL] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    const followUp = [
      ...messages,
      first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam,
      { role: "tool" as const, tool_call_id: call.id, content: "Eve" },
    ];
    const other = await openai({ token: TOKEN_B, session })
      .chat.completions.create({ model: MODEL, messages: followUp })
      .catch((e) => e);
    expect(other).toBeInstanceOf(OpenAI.NotFoundError);
    // Tenant A's run is still parked, untouched, and completes with A's result.
    const runId = await parkedRunId(session);
    await appendSteps(s.id, [{ toolCalls: [{ id: "w1", name: "wait", input: { runId } }] }, { text: "ok" }]);
    const mine = await openai({ session }).chat.completions.create({
      model: MODEL,
      messages: [...followUp.slice(0, -1), { role: "tool", tool_call_id: call.id, content: "Ada" }],
    });
    expect(mine.choices[0]!.message.content).toBe("ok");
    const waited = toolResults((await requests(s.id)).at(-1)!).find((t) => t.id === "w1")!;
    expect(JSON.parse(waited.content)).toMatchObject({ value: "Hello, Ada" });
  });

  it("an edited history before the pending call starts a new turn instead of resuming the parked one", async () => {
    const session = sessionId();
    const client = openai({ session });
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ASK_CODE } }] }, { text: "fresh start" }]);
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: `${s.marker} greet me` }];
    const first = await client.chat.completions.create({ model: MODEL, messages, tools: [ASK_TOOL] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    const { data, response } = await client.chat.completions
      .create({
        model: MODEL,
        messages: [
          { role: "user", content: `${s.marker} greet me politely` },
          first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam,
          { role: "tool", tool_call_id: call.id, content: "Ada" },
        ],
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe("fresh start");
    // A new turn: the model got the edited conversation as text, the earlier call shown as what it was.
    const last = (await requests(s.id)).at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain("greet me politely");
    expect(JSON.stringify(last.body.messages)).toContain(`[tool result ${call.id}: Ada]`);
    expect(response.headers.get("x-turn-id")).not.toBe("");
    // The parked run was not resumed with the result.
    expect(await parkedRunId(session)).toMatch(/^cm_/);
  });

  it("GET /v1/models lists the configured provider/model ids in the OpenAI list format", async () => {
    const ids: string[] = [];
    for await (const m of openai().models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(["fakeoai/gpt-fake", "fakeant/claude-fake"]));
  });
});
