import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../../src/config";
import {
  costUsd,
  createModelClient,
  ProviderError,
  resolveModel,
  type ModelClient,
  type ModelEvent,
  type ModelMessage,
  type ModelRequest,
  type ModelToolCall,
  type TransportObserver,
} from "../../src/providers";
import type { ModelTool } from "../../src/turns";
import { fakeScript, type FakeRequestRecord } from "../support/fake-provider-client";

/**
 * The provider adapters inside workerd against the fake provider server (test/support/fake-providers.mjs),
 * which speaks both wire formats exactly and refuses (400, recorded) any request a real API would refuse:
 * every call here goes config → resolveModel (the Worker's own CODEMODE_CONFIG and secrets) →
 * createModelClient → the kept wire client (AI SDK) → HTTP.
 */

const config = (() => {
  const result = loadGatewayConfig(env as { CODEMODE_CONFIG?: string });
  if (!result.ok) throw new Error(`test config refused: ${result.error.message}`);
  return result.config;
})();

function client(ref: string, options: { timeoutMs?: number; observer?: TransportObserver } = {}): ModelClient {
  const resolved = resolveModel(config, ref, env as Record<string, unknown>);
  if (!resolved.ok) throw new Error(resolved.message);
  return createModelClient(resolved.model, { timeoutMs: options.timeoutMs ?? 15_000, observer: options.observer });
}

type Outcome = { events: ModelEvent[]; error?: ProviderError };

/** Runs one call to its end; a thrown error must be a ProviderError (anything else fails the test). */
async function collect(
  model: ModelClient,
  request: Partial<ModelRequest> & { messages: ModelMessage[] },
  onEvent?: (event: ModelEvent) => void,
): Promise<Outcome> {
  const events: ModelEvent[] = [];
  try {
    for await (const event of model.stream({ tools: [], signal: new AbortController().signal, ...request })) {
      events.push(event);
      onEvent?.(event);
    }
    return { events };
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    return { events, error };
  }
}

const texts = (events: ModelEvent[]) => events.flatMap((e) => (e.type === "text-delta" ? [e.text] : []));
const calls = (events: ModelEvent[]) => events.flatMap((e) => (e.type === "tool-call" ? [e.call] : []));
const finish = (events: ModelEvent[]) => {
  const last = events.at(-1);
  if (last?.type !== "finish") throw new Error(`no finish event: ${JSON.stringify(events)}`);
  return last;
};
const utf8Length = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

const EXEC_TOOL: ModelTool = {
  name: "exec",
  description: "Run a short program.",
  parameters: {
    type: "object",
    properties: { code: { type: "string" }, language: { type: "string", enum: ["javascript", "typescript"] } },
    required: ["code"],
  },
};
const WAIT_TOOL: ModelTool = {
  name: "wait",
  description: "Resume a waiting run.",
  parameters: { type: "object", properties: { runId: { type: "string" } }, required: ["runId"] },
};

const WIRES = [
  { wire: "openai", ref: "fakeoai/gpt-fake", badKeyRef: "fakeoai-badkey/gpt-fake", path: "/v1/chat/completions" },
  { wire: "anthropic", ref: "fakeant/claude-fake", badKeyRef: "fakeant-badkey/claude-fake", path: "/v1/messages" },
] as const;

describe.each(WIRES)("$wire wire format", ({ wire, ref, badKeyRef, path }) => {
  const ask = (marker: string, text = "What is 1 + 2?"): ModelMessage[] => [
    { role: "system", content: "You are terse." },
    { role: "user", content: `${marker} ${text}` },
  ];

  it("streams text deltas in order, then one finish with usage and the request's byte count", async () => {
    const script = await fakeScript([{ text: ["Hel", "lo, ", "wor", "ld"], usage: { input: 21, output: 4 } }]);
    const { events, error } = await collect(client(ref), { messages: ask(script.marker) });
    expect(error).toBeUndefined();
    expect(texts(events)).toEqual(["Hel", "lo, ", "wor", "ld"]);
    expect(events.map((e) => e.type)).toEqual(["text-delta", "text-delta", "text-delta", "text-delta", "finish"]);
    const [request] = await script.requests();
    expect(request!.problems).toEqual([]);
    expect(finish(events)).toEqual({
      type: "finish",
      finishReason: "stop",
      usage: { inputTokens: 21, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0 },
      requestBytes: utf8Length(request!.body),
    });
    expect(request!.path).toBe(path);
    expect(request!.body.stream).toBe(true);
    if (wire === "openai") {
      expect(request!.headers.authorization).toBe("present");
      expect(request!.body.stream_options).toEqual({ include_usage: true });
      expect(request!.body.messages.slice(0, 1)).toEqual([{ role: "system", content: "You are terse." }]);
    } else {
      expect(request!.headers["x-api-key"]).toBe("present");
      expect(request!.body.system).toEqual([{ type: "text", text: "You are terse." }]);
      expect(request!.headers["anthropic-version"]).toBe("2023-06-01");
      expect(request!.body.messages.map((m: { role: string }) => m.role)).toEqual(["user"]);
      expect(request!.body.max_tokens).toBe(4096);
    }
  });

  it("sends the turn's tools as function tools, and one tool call comes back parsed from fragments", async () => {
    const input = { code: "const xs = [1, 2, 3];\nreturn xs.map((x) => x * 2);", language: "javascript" };
    const script = await fakeScript([{ toolCalls: [{ name: "exec", input }], usage: { input: 50, output: 30 } }]);
    const { events, error } = await collect(client(ref), { messages: ask(script.marker), tools: [EXEC_TOOL, WAIT_TOOL] });
    expect(error).toBeUndefined();
    expect(calls(events)).toEqual([{ id: expect.stringMatching(/^(call_|toolu_)/), name: "exec", input }]);
    expect(finish(events).finishReason).toBe("tool-calls");
    const [request] = await script.requests();
    expect(request!.problems).toEqual([]);
    if (wire === "openai") {
      expect(request!.body.tools).toEqual([
        { type: "function", function: { name: "exec", description: EXEC_TOOL.description, parameters: EXEC_TOOL.parameters } },
        { type: "function", function: { name: "wait", description: WAIT_TOOL.description, parameters: WAIT_TOOL.parameters } },
      ]);
    } else {
      expect(request!.body.tools).toEqual([
        { name: "exec", description: EXEC_TOOL.description, input_schema: EXEC_TOOL.parameters },
        { name: "wait", description: WAIT_TOOL.description, input_schema: WAIT_TOOL.parameters },
      ]);
    }
  });

  it("two parallel tool calls keep their ids, names and arguments apart", async () => {
    const script = await fakeScript([
      {
        text: "Running both.",
        toolCalls: [
          { id: wire === "openai" ? "call_aaa" : "toolu_aaa", name: "exec", input: { code: "return 'first one, with a longer body';" } },
          { id: wire === "openai" ? "call_bbb" : "toolu_bbb", name: "wait", input: { runId: "cm_123456789" } },
        ],
      },
    ]);
    const { events, error } = await collect(client(ref), { messages: ask(script.marker), tools: [EXEC_TOOL, WAIT_TOOL] });
    expect(error).toBeUndefined();
    expect(texts(events).join("")).toBe("Running both.");
    expect(calls(events)).toEqual([
      { id: wire === "openai" ? "call_aaa" : "toolu_aaa", name: "exec", input: { code: "return 'first one, with a longer body';" } },
      { id: wire === "openai" ? "call_bbb" : "toolu_bbb", name: "wait", input: { runId: "cm_123456789" } },
    ]);
  });

  it("usage keeps cache reads and writes apart from the other input tokens, so the cost is right", async () => {
    const script = await fakeScript([{ text: "ok", usage: { input: 1000, output: 200, cacheRead: 3000, cacheWrite: 500 } }]);
    const model = client(ref);
    const { events, error } = await collect(model, { messages: ask(script.marker) });
    expect(error).toBeUndefined();
    const usage = finish(events).usage;
    expect(usage).toEqual({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 3000, cacheWriteTokens: 500 });
    const expected = wire === "openai" ? (1000 * 2 + 200 * 8 + 3000 * 0.5 + 500 * 0) / 1e6 : (1000 * 3 + 200 * 15 + 3000 * 0.3 + 500 * 3.75) / 1e6;
    expect(costUsd(usage, model.model.cost)).toBeCloseTo(expected, 12);
  });

  it("tool results round-trip: the next request answers each call by its id (the fake checks them)", async () => {
    const script = await fakeScript([
      {
        toolCalls: [
          { name: "exec", input: { code: "return 1 + 2" } },
          { name: "wait", input: { runId: "cm_1" } },
        ],
      },
      { text: "It is 3." },
      { text: "unused" },
    ]);
    const model = client(ref);
    const messages = ask(script.marker);
    const first = await collect(model, { messages, tools: [EXEC_TOOL, WAIT_TOOL] });
    expect(first.error).toBeUndefined();
    const [execCall, waitCall] = calls(first.events) as [ModelToolCall, ModelToolCall];
    messages.push({ role: "assistant", content: "", toolCalls: [execCall, waitCall] });
    messages.push({ role: "tool", toolCallId: execCall.id, toolName: "exec", content: '{"status":"completed","value":3}' });
    messages.push({ role: "tool", toolCallId: waitCall.id, toolName: "wait", content: "no such run", isError: true });
    const second = await collect(model, { messages, tools: [EXEC_TOOL, WAIT_TOOL] });
    expect(second.error).toBeUndefined();
    expect(texts(second.events).join("")).toBe("It is 3.");

    const requests = await script.requests();
    expect(requests.map((r) => r.problems)).toEqual([[], []]);
    const body = requests[1]!.body;
    if (wire === "openai") {
      expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
      expect(body.messages[2].tool_calls.map((c: { id: string }) => c.id)).toEqual([execCall.id, waitCall.id]);
      expect(body.messages[3]).toEqual({ role: "tool", tool_call_id: execCall.id, content: '{"status":"completed","value":3}' });
      expect(body.messages[4]).toEqual({ role: "tool", tool_call_id: waitCall.id, content: "no such run" });
    } else {
      expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
      expect(body.messages[1].content.map((b: { type: string; id: string }) => [b.type, b.id])).toEqual([
        ["tool_use", execCall.id],
        ["tool_use", waitCall.id],
      ]);
      expect(body.messages[2].content).toEqual([
        { type: "tool_result", tool_use_id: execCall.id, content: '{"status":"completed","value":3}' },
        { type: "tool_result", tool_use_id: waitCall.id, content: "no such run", is_error: true },
      ]);
    }
  });

  it("a tool result answering no call is refused by the fake: provider_error 400 with the vendor's message", async () => {
    const script = await fakeScript([{ toolCalls: [{ name: "exec", input: { code: "1" } }] }]);
    const model = client(ref);
    const messages = ask(script.marker);
    const first = await collect(model, { messages, tools: [EXEC_TOOL] });
    const [call] = calls(first.events) as [ModelToolCall];
    messages.push({ role: "assistant", content: "", toolCalls: [call] });
    messages.push({ role: "tool", toolCallId: "call_nobody_made", toolName: "exec", content: "3" });
    const { error } = await collect(model, { messages, tools: [EXEC_TOOL] });
    expect(error).toMatchObject({ code: "provider_error", status: 400 });
    expect(error!.message).toContain("call_nobody_made");
    const requests = await script.requests();
    expect(requests[1]!.problems.join("\n")).toContain("call_nobody_made");
  });

  it("a wrong key is provider_error 401 with the vendor's message, the key masked", async () => {
    const script = await fakeScript([]);
    const { events, error } = await collect(client(badKeyRef), { messages: ask(script.marker) });
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: "provider_error", status: 401 });
    expect(error!.message).toBe(
      wire === "openai"
        ? "Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys."
        : "invalid x-api-key",
    );
    const [request] = await script.requests();
    expect(request!.headers[wire === "openai" ? "authorization" : "x-api-key"]).toBe("wrong");
  });

  it("429 with retry-after is provider_rate_limited with retryAfterSeconds", async () => {
    const script = await fakeScript([{ error: { status: 429, message: "Rate limit reached for requests", headers: { "retry-after": "7" } } }]);
    const { error } = await collect(client(ref), { messages: ask(script.marker) });
    expect(error).toMatchObject({ code: "provider_rate_limited", status: 429, retryAfterSeconds: 7, message: "Rate limit reached for requests" });
  });

  it("500 is provider_unavailable with the provider's status and message", async () => {
    const script = await fakeScript([{ error: { status: 500, message: "The server had an error while processing your request." } }]);
    const { error } = await collect(client(ref), { messages: ask(script.marker) });
    expect(error).toMatchObject({ code: "provider_unavailable", status: 500, message: "The server had an error while processing your request." });
    expect(error!.retryAfterSeconds).toBeUndefined();
  });

  it("an answer that stalls past timeoutMs is provider_timeout (status 0), and the connection is closed", async () => {
    const script = await fakeScript([{ hangMs: 60_000 }]);
    const { error } = await collect(client(ref, { timeoutMs: 300 }), { messages: ask(script.marker) });
    expect(error).toMatchObject({ code: "provider_timeout", status: 0 });
    const [request] = await script.requests();
    expect(request!.aborted).toBe(true);
  });

  it("the caller's signal mid-stream is aborted, and the fake sees the client go away", async () => {
    const script = await fakeScript([{ text: ["partial"], hangMs: 60_000 }]);
    const caller = new AbortController();
    const { events, error } = await collect(client(ref), { messages: ask(script.marker), signal: caller.signal }, (event) => {
      if (event.type === "text-delta") caller.abort();
    });
    expect(texts(events)).toEqual(["partial"]);
    expect(error).toMatchObject({ code: "aborted" });
    const [request] = await script.requests();
    expect(request!.aborted).toBe(true);
  });

  it("a consumer that stops reading closes the provider's stream", async () => {
    const script = await fakeScript([{ text: ["first"], hangMs: 60_000 }]);
    for await (const event of client(ref).stream({ messages: ask(script.marker), tools: [], signal: new AbortController().signal })) {
      expect(event).toEqual({ type: "text-delta", text: "first" });
      break;
    }
    const [request] = await script.requests();
    expect(request!.aborted).toBe(true);
  });

  it("a malformed stream is provider_unavailable", async () => {
    const script = await fakeScript([{ malformed: true, text: "before the break" }]);
    const { error } = await collect(client(ref), { messages: ask(script.marker) });
    expect(error).toMatchObject({
      code: "provider_unavailable",
      status: 200,
      message: `provider "${ref.split("/")[0]}" (HTTP 200) sent a malformed response: an event was not valid JSON`,
    });
  });

  it("tool arguments that are not a JSON object keep the raw text and say why", async () => {
    const script = await fakeScript([
      {
        toolCalls: [
          { id: wire === "openai" ? "call_bad" : "toolu_bad", name: "exec", input: '{"code": "return 1' },
          { id: wire === "openai" ? "call_arr" : "toolu_arr", name: "exec", input: "[1, 2]" },
        ],
      },
    ]);
    const { events, error } = await collect(client(ref), { messages: ask(script.marker), tools: [EXEC_TOOL] });
    expect(error).toBeUndefined();
    const [bad, array] = calls(events) as [ModelToolCall, ModelToolCall];
    expect(bad).toMatchObject({ name: "exec", input: '{"code": "return 1', inputError: expect.stringContaining("not valid JSON") });
    expect(array).toMatchObject({ name: "exec", input: "[1, 2]", inputError: "the arguments must be a JSON object, not an array" });
  });

  it("a tool schema with anyOf is refused by the fake (validation works): provider_error 400", async () => {
    const script = await fakeScript([{ text: "never sent" }]);
    const loose: ModelTool = {
      name: "loose",
      description: "A tool whose schema only one provider would take.",
      parameters: { type: "object", properties: { id: { anyOf: [{ type: "string" }, { type: "number" }] } } },
    };
    const { error } = await collect(client(ref), { messages: ask(script.marker), tools: [loose] });
    expect(error).toMatchObject({ code: "provider_error", status: 400 });
    expect(error!.message).toContain("anyOf is not allowed");
    const [request] = await script.requests();
    expect(request!.problems).toEqual([
      `${wire === "openai" ? "tools[0].function.parameters" : "tools[0].input_schema"}.properties.id.anyOf is not allowed in a tool schema (flat schemas only)`,
    ]);
  });

  it("the transport observer sees the request, the status and every SSE data payload, never the key", async () => {
    const script = await fakeScript([{ text: ["a", "b"], usage: { input: 3, output: 2 } }]);
    const seen: {
      requests: { url: string; body: unknown; bytes: number }[];
      responses: { url: string; status: number; ms: number }[];
      sse: string[];
    } = {
      requests: [],
      responses: [],
      sse: [],
    };
    const observer: TransportObserver = {
      request: (info) => seen.requests.push(info),
      response: (info) => seen.responses.push(info),
      sseEvent: (data) => seen.sse.push(data),
    };
    const { events, error } = await collect(client(ref, { observer }), { messages: ask(script.marker) });
    expect(error).toBeUndefined();
    const [request] = await script.requests();
    expect(seen.requests).toEqual([
      { url: expect.stringMatching(new RegExp(`${path.replace(/\//g, "\\/")}$`)), body: request!.body, bytes: finish(events).requestBytes },
    ]);
    expect(seen.responses).toEqual([{ url: seen.requests[0]!.url, status: 200, ms: expect.any(Number) }]);
    const payloads = seen.sse.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d));
    if (wire === "openai") {
      expect(seen.sse.at(-1)).toBe("[DONE]");
      expect(payloads.map((p) => p.choices[0]?.delta?.content).filter((c) => c)).toEqual(["a", "b"]);
      expect(payloads.at(-1).usage.prompt_tokens).toBe(3);
    } else {
      expect(payloads.map((p) => p.type)).toEqual([
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
      ]);
    }
    expect(JSON.stringify(seen)).not.toContain("fake-key-");
  });
});

describe("catalog rows on the wire", () => {
  it("a row's maxTokens caps the call (max_tokens) and its contextWindow is resolved; a request's own cap wins", async () => {
    const small = resolveModel(config, "fakeoai/gpt-fake-small", env as Record<string, unknown>);
    expect(small).toMatchObject({ ok: true, model: { contextWindow: 8000, maxOutputTokens: 1000, wireModel: "gpt-fake-small" } });
    const script = await fakeScript([{ text: "a" }, { text: "b" }]);
    const messages: ModelMessage[] = [{ role: "user", content: script.marker }];
    expect((await collect(client("fakeoai/gpt-fake-small"), { messages })).error).toBeUndefined();
    expect((await collect(client("fakeoai/gpt-fake-small"), { messages, maxOutputTokens: 50 })).error).toBeUndefined();
    expect((await script.requests()).map((r) => [r.body.model, r.body.max_tokens])).toEqual([
      ["gpt-fake-small", 1000],
      ["gpt-fake-small", 50],
    ]);
    expect(resolveModel(config, "fakeoai/gpt-fake", env as Record<string, unknown>)).toMatchObject({ ok: true, model: { contextWindow: 128_000 } });
  });

  it("a model without prices reports usage but no cost", async () => {
    const script = await fakeScript([{ text: "a", usage: { input: 10, output: 1 } }]);
    const model = client("fakeoai/gpt-fake-nocost");
    const { events } = await collect(model, { messages: [{ role: "user", content: script.marker }] });
    expect(finish(events).usage).toEqual({ inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(costUsd(finish(events).usage, model.model.cost)).toBeUndefined();
  });
});

describe("one conversation over both wire formats", () => {
  it("the same neutral history (system, tool calls, results) is valid for both vendors", async () => {
    for (const { ref } of WIRES) {
      const script = await fakeScript([{ text: "fine" }]);
      const messages: ModelMessage[] = [
        { role: "system", content: "Be brief." },
        { role: "user", content: `${script.marker} Start.` },
        { role: "assistant", content: "Let me look.", toolCalls: [{ id: "call_x1", name: "exec", input: { code: "return 1" } }] },
        { role: "tool", toolCallId: "call_x1", toolName: "exec", content: "1" },
        { role: "assistant", content: "One." },
        { role: "user", content: "And now?" },
        { role: "assistant", content: "", toolCalls: [{ id: "call_x2", name: "exec", input: "{broken", inputError: "not JSON" }] },
        { role: "tool", toolCallId: "call_x2", toolName: "exec", content: "invalid arguments", isError: true },
      ];
      const { error } = await collect(client(ref), { messages, tools: [EXEC_TOOL] });
      expect(error, ref).toBeUndefined();
      const [request] = (await script.requests()) as [FakeRequestRecord];
      expect(request.problems, ref).toEqual([]);
    }
  });
});
