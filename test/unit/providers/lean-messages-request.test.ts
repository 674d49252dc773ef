import { describe, expect, it } from "vitest";
import { messagesRequest } from "../../../src/providers/lean-messages-request";
import type { ModelMessage, ModelRequest, ResolvedModel } from "../../../src/providers";
import type { ModelTool } from "../../../src/turns";
import { modelFor } from "./reader-comparison";
import { MESSAGES_OK, messagesSse, streamed } from "./wire-fixtures";
import { callWith, never, respond, restoreLeanWire, type Answer } from "./request-comparison";

// The Messages request we build and send (lean-messages-request.ts, lean-wire.ts) against the AI
// SDK's Anthropic `doStream` it replaces: for each call and model family, the same bytes reach the
// fetch (URL, method, every header in order, the body text), the observer sees the same, and each
// failure answer gives the same ProviderError (code, message, status, retryAfterSeconds).

restoreLeanWire();
const base = modelFor("anthropic-messages");
const model = (over: Partial<ResolvedModel> = {}): ResolvedModel => ({ ...base, wireModel: "claude-sonnet-4-5", ...over });

const exec: ModelTool = {
  name: "exec",
  description: "run",
  parameters: { type: "object", properties: { code: { type: "string", pattern: "^(?=a)" } }, required: ["code"], propertyNames: { maxLength: 9 } },
};
const wait: ModelTool = { name: "wait", description: "resume", parameters: { type: "object", properties: { runId: { type: "string" } } } };
const odd: ModelTool = { name: "srv__my.tool (v2)", description: "an MCP tool with a name providers refuse", parameters: { type: "object" } };

const sse = messagesSse;
const ok: Answer = streamed(messagesSse(...MESSAGES_OK));

const multiRound: ModelMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "system", content: "" },
  { role: "user", content: "add things" },
  {
    role: "assistant",
    content: "Let me run it.  ",
    toolCalls: [{ id: "toolu_1", name: "exec", input: { code: "return 1 + 1", nested: { a: [1, "two", null] } } }],
  },
  { role: "tool", toolCallId: "toolu_1", toolName: "exec", content: '{"status":"ok","value":2}' },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "toolu_2", name: "exec", input: { code: "a" } },
      { id: "toolu_3", name: "wait", input: { runId: "r1" } },
    ],
  },
  { role: "tool", toolCallId: "toolu_2", toolName: "exec", content: "SyntaxError: oops", isError: true },
  { role: "tool", toolCallId: "toolu_3", toolName: "wait", content: "done" },
  { role: "user", content: "and a note beside the results" },
  {
    role: "assistant",
    content: " ",
    toolCalls: [
      { id: "toolu_4", name: "exec", input: '{"code":', inputError: "arguments are not valid JSON" },
      { id: "toolu_5", name: "exec", input: [1, 2] },
    ],
  },
  { role: "tool", toolCallId: "toolu_4", toolName: "exec", content: "bad arguments", isError: true },
  { role: "tool", toolCallId: "toolu_5", toolName: "exec", content: "bad arguments", isError: true },
  { role: "assistant", content: 'All done: 2 \u2713 \u{1F600} "quoted" \\ </script>' },
  { role: "assistant", content: "", toolCalls: [{ id: "toolu_6", name: "wait", input: {} }] },
  { role: "tool", toolCallId: "toolu_6", toolName: "wait", content: "" },
  { role: "user", content: "thanks" },
];

type Case = [string, Partial<ResolvedModel>, Omit<ModelRequest, "signal">];
const hiMessages: ModelMessage[] = [{ role: "user", content: "hi" }];
const REQUESTS: Case[] = [
  ["one user message, no tools", {}, { messages: hiMessages, tools: [] }],
  [
    "system, user, tools",
    {},
    {
      messages: [
        { role: "system", content: "sys" },
        { role: "user", content: "hi" },
      ],
      tools: [exec, wait],
    },
  ],
  [
    "multi-round tool calls: parallel calls, merged error results, unparsed arguments replayed as {}",
    {},
    { messages: multiRound, tools: [exec, wait] },
  ],
  [
    "aliased wire names, offered and replayed",
    {},
    {
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: "", toolCalls: [{ id: "t1", name: odd.name, input: { x: 1 } }] },
        { role: "tool", toolCallId: "t1", toolName: odd.name, content: "1" },
      ],
      tools: [exec, odd],
    },
  ],
  ["replayed calls with no tools offered", {}, { messages: multiRound, tools: [] }],
  [
    "a conversation ending with the assistant: its last text trimmed",
    {},
    {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "first  " },
        { role: "assistant", content: "  prefill \n" },
      ],
      tools: [],
    },
  ],
  [
    "ending with an assistant tool call: its text kept as it is",
    {},
    {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: " x ", toolCalls: [{ id: "t", name: "exec", input: {} }] },
      ],
      tools: [exec],
    },
  ],
  [
    "an empty assistant turn between users",
    {},
    {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "" },
        { role: "user", content: "again" },
      ],
      tools: [],
    },
  ],
  [
    "system messages later in the conversation",
    {},
    {
      messages: [
        { role: "user", content: "hi" },
        { role: "system", content: "first system, after a user" },
        { role: "assistant", content: "a" },
        { role: "system", content: "a later one" },
        { role: "system", content: "and another" },
        { role: "user", content: "b" },
      ],
      tools: [exec],
    },
  ],
  ["temperature, topP and maxOutputTokens", {}, { messages: hiMessages, tools: [exec], temperature: 0.2, topP: 0.9, maxOutputTokens: 300 }],
  ["topP alone", {}, { messages: hiMessages, tools: [], topP: 0.5 }],
  ["temperature above 1, clamped", {}, { messages: hiMessages, tools: [], temperature: 1.7 }],
  ["temperature 0 beside topP", {}, { messages: hiMessages, tools: [], temperature: 0, topP: 0.3 }],
  ["maxOutputTokens over the model's ceiling", {}, { messages: hiMessages, tools: [exec], maxOutputTokens: 200_000 }],
  ["the model row's maxTokens caps the request", { maxOutputTokens: 50 }, { messages: hiMessages, tools: [], maxOutputTokens: 100 }],
  ["a base URL with a trailing slash", { baseUrl: "https://p.example/v1/" }, { messages: hiMessages, tools: [exec] }],
  ["the bare Anthropic origin gets /v1", { baseUrl: "https://api.anthropic.com/" }, { messages: hiMessages, tools: [] }],
];

/** An id of each family the SDK's catalog tells apart, and ids it does not know. */
const FAMILY_IDS = [
  "claude-sonnet-4-5",
  "claude-sonnet-4-5-20250929",
  "claude-3-7-sonnet-20250219",
  "claude-3-7-sonnet-latest",
  "claude-opus-4-1",
  "claude-opus-4-20250514",
  "claude-sonnet-4-0",
  "claude-sonnet-4-6",
  "claude-opus-4-7",
  "claude-haiku-4-5",
  "claude-3-haiku-20240307",
  "claude-3-5-haiku-latest",
  "claude-sonnet-5",
  "claude-fable-5-1",
  "claude-next-unknown",
  "my-proxy-model",
];

const withId = (over: Partial<ResolvedModel>, id: string) => model({ ...over, wireModel: over.wireModel ?? id });

describe("the Messages request we send is the SDK's, byte for byte", () => {
  for (const [name, over, request] of REQUESTS) {
    it(name, async () => {
      const sdk = await callWith(false, model(over), request, ok);
      const lean = await callWith(true, model(over), request, ok);
      expect(sdk.error).toBeUndefined();
      expect(sdk.sent).toHaveLength(1);
      expect(lean).toEqual(sdk);
      expect(messagesRequest(model(over), request.messages, request.tools, request, (n) => n)).toBeDefined();
    });
  }
});

describe("for every model family the SDK tells apart, the Messages request we send is the SDK's", () => {
  for (const id of FAMILY_IDS) {
    it(`${id}: the whole corpus, byte for byte`, async () => {
      for (const [name, over, request] of REQUESTS) {
        const sdk = await callWith(false, withId(over, id), request, ok);
        const lean = await callWith(true, withId(over, id), request, ok);
        expect(sdk.error, name).toBeUndefined();
        expect(lean, name).toEqual(sdk);
      }
    });
  }

  it("the rules show on the wire: caps, sampling, betas, merged results, trimming", () => {
    const sent = (id: string, request: Omit<ModelRequest, "signal">) => {
      const built = messagesRequest(model({ wireModel: id }), request.messages, request.tools, request, (n) => n)!;
      return { headers: built.headers, body: JSON.parse(built.body) };
    };
    const sampled = { messages: hiMessages, tools: [exec], temperature: 0.2, topP: 0.9, maxOutputTokens: 100_000 };
    const sonnet = sent("claude-sonnet-4-5", sampled);
    expect([sonnet.body.max_tokens, sonnet.body.temperature, sonnet.body.top_p]).toEqual([64_000, 0.2, undefined]);
    expect(sonnet.headers["anthropic-beta"]).toBe("structured-outputs-2025-11-13");
    expect(sonnet.headers["x-api-key"]).toBe(base.apiKey);
    expect(sonnet.body.tools[0]).toEqual({ name: "exec", description: "run", input_schema: exec.parameters });
    const opus47 = sent("claude-opus-4-7", sampled);
    expect([opus47.body.max_tokens, opus47.body.temperature, opus47.body.top_p]).toEqual([100_000, undefined, undefined]);
    const old = sent("claude-3-7-sonnet-latest", sampled);
    expect([old.body.max_tokens, old.headers["anthropic-beta"]]).toEqual([100_000, undefined]);
    expect(sent("my-proxy-model", sampled).body.top_p).toBe(0.9);
    const merged = sent("claude-sonnet-4-5", { messages: multiRound, tools: [] }).body;
    expect(merged.system).toEqual([
      { type: "text", text: "You are terse." },
      { type: "text", text: "" },
    ]);
    expect(merged.messages[4].content.map((b: { type: string; is_error?: boolean }) => [b.type, b.is_error])).toEqual([
      ["tool_result", true],
      ["tool_result", undefined],
      ["text", undefined],
    ]);
    const trimmed = sent("claude-sonnet-4-5", REQUESTS[5]![2]).body;
    expect(trimmed.messages[1].content.map((b: { text: string }) => b.text)).toEqual(["first  ", "prefill"]);
  });
});

const hi = { messages: hiMessages, tools: [exec] };
const json = (v: unknown, status: number, headers: Record<string, string> = {}) =>
  respond(JSON.stringify(v), status, { "content-type": "application/json", ...headers });
const anthropicError = (type: string, message: string) => ({ type: "error", error: { type, message } });
const huge = JSON.stringify(anthropicError("invalid_request_error", "x".repeat(200_000)));

const FAILURES: Array<[string, Answer, { timeoutMs?: number; abortAfterSend?: boolean }?]> = [
  ["400 invalid_request_error", json(anthropicError("invalid_request_error", "max_tokens: 200000 > 64000, the maximum"), 400)],
  [
    "400 with details beside the message",
    json({ type: "error", error: { type: "invalid_request_error", message: "m", details: { error_code: 5 } } }, 400),
  ],
  ["401 whose message echoes the key", json(anthropicError("authentication_error", "invalid x-api-key: sk-test-0123456789abcdef"), 401)],
  ["403 permission_error", json(anthropicError("permission_error", "Your API key does not have permission"), 403)],
  ["404 not_found_error", json(anthropicError("not_found_error", "model: claude-nope"), 404)],
  ["404 with an empty body", respond("", 404, {}, "Not Found")],
  ["413 request_too_large", json(anthropicError("request_too_large", "Request exceeds the maximum allowed number of bytes."), 413)],
  [
    "429 with retry-after seconds",
    json(anthropicError("rate_limit_error", "Number of request tokens has exceeded your rate limit"), 429, { "retry-after": "7" }),
  ],
  ["429 with a retry-after date", json(anthropicError("rate_limit_error", "slow down"), 429, { "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" })],
  ["429 without retry-after", respond("busy", 429, {}, "Too Many Requests")],
  ["500 api_error", json(anthropicError("api_error", "Internal server error"), 500)],
  ["529 overloaded", json(anthropicError("overloaded_error", "Overloaded"), 529)],
  ["an OpenAI-shaped error body", json({ error: { message: "not this wire's shape", type: "x" } }, 400)],
  ["an error body whose type is not error", json({ type: "oops", error: { type: "x", message: "m" } }, 400)],
  ["an error whose message is not a string", json({ type: "error", error: { type: "x", message: 5 } }, 400)],
  ["502 HTML error page", respond("<html><body><h1>502 Bad Gateway</h1></body></html>", 502, { "content-type": "text/html" }, "Bad Gateway")],
  ["an error body past the error-body bound", respond(huge, 400, { "content-type": "application/json" }, "Bad Request")],
  ["JSON error with a prototype key", respond('{"type":"error","error":{"type":"x","message":"m"},"__proto__":{"x":1}}', 400, {}, "Bad Request")],
  ["200 with a JSON body, no event stream", json({ id: "msg", type: "message", role: "assistant", content: [{ type: "text", text: "hi" }] }, 200)],
  ["200 with no body", respond(null, 200)],
  [
    "an error event first in the stream",
    respond(sse(anthropicError("overloaded_error", "Overloaded")), 200, { "content-type": "text/event-stream" }),
  ],
  [
    "network failure with a cause",
    async () => Promise.reject(new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 10.0.0.1:443") })),
  ],
  ["network failure with a network code", async () => Promise.reject(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))],
  ["any other fetch error", async () => Promise.reject(new Error("Network connection lost."))],
  ["the caller aborts mid-request", never, { abortAfterSend: true }],
  ["the deadline passes mid-request", never, { timeoutMs: 20 }],
];

describe("a Messages failure answer gives the SDK path's ProviderError", () => {
  for (const [name, answer, opts] of FAILURES) {
    it(name, async () => {
      const sdk = await callWith(false, model(), hi, answer, opts);
      const lean = await callWith(true, model(), hi, answer, opts);
      expect(sdk.error).toBeDefined();
      expect(lean.error).toEqual(sdk.error);
      expect(lean.sent).toEqual(sdk.sent);
    });
  }

  it("a blank base URL is left to the SDK, which refuses it the same way", async () => {
    expect(messagesRequest(model({ baseUrl: " " }), hiMessages, [], {}, (n) => n)).toBeUndefined();
    const sdk = await callWith(false, model({ baseUrl: " " }), hi, ok);
    const lean = await callWith(true, model({ baseUrl: " " }), hi, ok);
    expect(sdk.error).toBeDefined();
    expect(lean).toEqual(sdk);
  });
});
