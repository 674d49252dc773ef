import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { sessionId, sessionStub, TOKEN_B } from "./helpers";
import { appendSteps, requests, script, toolResults } from "./chat-helpers";
import { anthropic, ASK_CODE, parkedRunId } from "./facade-helpers";

// POST /v1/messages driven by the official `@anthropic-ai/sdk` package (x-api-key auth, its
// MessageStream helper, its error classes), over the real path to the fake Anthropic-format provider.

const MODEL = "fakeant/claude-fake";
const USAGE = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 };
const ASK_TOOL = {
  name: "ask_user",
  description: "Ask the user",
  input_schema: { type: "object" as const, properties: { question: { type: "string" } } },
};

describe("/v1/messages with the Anthropic client", () => {
  it("runs exec inside the gateway and answers only the final message, with the whole turn's usage", async () => {
    const s = await script([
      { text: "Computing.", toolCalls: [{ id: "e1", name: "exec", input: { code: "return 6 * 7" } }], usage: USAGE },
      { text: "It is 42.", usage: USAGE },
    ]);
    const msg = await anthropic().messages.create({
      model: MODEL,
      max_tokens: 256,
      system: "Be brief.",
      messages: [{ role: "user", content: `${s.marker} what is 6*7?` }],
    });
    expect(msg).toMatchObject({ type: "message", role: "assistant", stop_reason: "end_turn", content: [{ type: "text", text: "It is 42." }] });
    expect(msg.usage).toMatchObject({ input_tokens: 200, output_tokens: 40 });
    const reqs = await requests(s.id);
    expect(reqs[0]!.body.tools.map((t: any) => t.name).sort()).toEqual(["exec", "wait"]);
    expect(reqs[0]!.body.max_tokens).toBe(256);
    expect(toolResults(reqs[1]!)[0]!.content).toContain("42");
  });

  it("streams Anthropic's event sequence, which the SDK's MessageStream assembles", async () => {
    const s = await script([{ text: ["Hel", "lo ", "there"], usage: USAGE }]);
    const stream = anthropic().messages.stream({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: `${s.marker} hi` }] });
    const seen: string[] = [];
    const deltas: string[] = [];
    stream.on("streamEvent", (e) => seen.push(e.type));
    stream.on("text", (t) => deltas.push(t));
    const final = await stream.finalMessage();
    expect(final.content).toMatchObject([{ type: "text", text: "Hello there" }]);
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage).toMatchObject({ input_tokens: 100, output_tokens: 20 });
    expect(deltas.join("")).toBe("Hello there");
    expect(seen[0]).toBe("message_start");
    expect(seen.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(seen).toContain("content_block_start");
  });

  it("done-when: tool_use / tool_result across two requests (and an eviction) completes the original program, streamed", async () => {
    const session = sessionId();
    const client = anthropic({ session });
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ASK_CODE } }], usage: USAGE }]);
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: `${s.marker} greet me` }];
    const first = await client.messages.stream({ model: MODEL, max_tokens: 64, messages, tools: [ASK_TOOL] }).finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({ name: "ask_user", input: { question: "Name?" } });

    const runId = await parkedRunId(session);
    await appendSteps(s.id, [
      { toolCalls: [{ id: "w1", name: "wait", input: { runId } }], usage: USAGE },
      { text: "Greeted Ada.", usage: USAGE },
    ]);
    await evictDurableObject(sessionStub(session));

    const followUp: Anthropic.MessageParam[] = [
      ...messages,
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "Ada" }] },
    ];
    const second = await client.messages.create({ model: MODEL, max_tokens: 64, messages: followUp, tools: [ASK_TOOL] });
    expect(second.content).toEqual([{ type: "text", text: "Greeted Ada." }]);
    expect(second.usage).toMatchObject({ input_tokens: 300, output_tokens: 60 });
    const waited = toolResults((await requests(s.id)).at(-1)!).find((t) => t.id === "w1")!;
    expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: "Hello, Ada" });

    const replay = await client.messages.create({ model: MODEL, max_tokens: 64, messages: followUp }).catch((e) => e);
    expect(replay).toBeInstanceOf(Anthropic.ConflictError);
    expect(replay.error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  it("errors arrive as the SDK's own classes with the right status, in Anthropic's envelope", async () => {
    const client = anthropic();
    const unknown = await client.messages.create({ model: "nope/none", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(unknown.error).toMatchObject({ type: "error", error: { type: "not_found_error" } });

    const bad = await client.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: "system", content: "hi" } as any] }).catch((e) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);

    const limited = await script([{ error: { status: 429, message: "slow down", headers: { "retry-after": "7" } } }]);
    const rate = await client.messages
      .create({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: `${limited.marker} hi` }] })
      .catch((e) => e);
    expect(rate).toBeInstanceOf(Anthropic.RateLimitError);
    expect(rate.headers.get("retry-after")).toBe("7");
    expect(rate.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });

    const broken = await script([{ error: { status: 500, message: "upstream broke" } }]);
    const failed = await client.messages
      .create({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: `${broken.marker} hi` }] })
      .catch((e) => e);
    expect(failed).toBeInstanceOf(Anthropic.InternalServerError);
    expect(failed.status).toBe(502);

    const denied = await anthropic({ token: "not-a-token-at-all" })
      .messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it("tenants never meet: another tenant's tool_result for the same session and id is a 404", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ASK_CODE } }] }]);
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: `${s.marker} greet me` }];
    const first = await anthropic({ session }).messages.create({ model: MODEL, max_tokens: 64, messages, tools: [ASK_TOOL] });
    const use = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    const followUp: Anthropic.MessageParam[] = [
      ...messages,
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "Eve" }] },
    ];
    const other = await anthropic({ token: TOKEN_B, session })
      .messages.create({ model: MODEL, max_tokens: 64, messages: followUp })
      .catch((e) => e);
    expect(other).toBeInstanceOf(Anthropic.NotFoundError);
    expect(await parkedRunId(session)).toMatch(/^cm_/);
  });
});
