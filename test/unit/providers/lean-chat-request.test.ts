import { describe, expect, it } from "vitest";
import { chatCompletionsRequest } from "../../../src/providers/lean-chat-request";
import type { ModelMessage, ModelRequest, ResolvedModel } from "../../../src/providers";
import type { ModelTool } from "../../../src/turns";
import { modelFor } from "./reader-comparison";
import { CHAT_OK, chatSse, streamed } from "./wire-fixtures";
import { callWith, never, respond, restoreLeanWire, type Answer } from "./request-comparison";

// The Chat Completions request we build and send (lean-chat-request.ts, lean-wire.ts) against the
// AI SDK's `doStream` it replaces: for each call, the same bytes reach the fetch (URL, method,
// every header in order, the body text), the observer sees the same, and each failure answer gives
// the same ProviderError (code, message, status, retryAfterSeconds).

restoreLeanWire();
const base = modelFor("openai-completions");
const model = (over: Partial<ResolvedModel> = {}): ResolvedModel => ({ ...base, ...over });

const exec: ModelTool = {
  name: "exec",
  description: "run",
  parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
};
const wait: ModelTool = { name: "wait", description: "resume", parameters: { type: "object", properties: { runId: { type: "string" } } } };
const odd: ModelTool = { name: "srv__my.tool (v2)", description: "an MCP tool with a name providers refuse", parameters: { type: "object" } };
const odd2: ModelTool = { name: "srv__my.tool (v3)", description: "another", parameters: { type: "object", properties: {} } };

const ok: Answer = streamed(chatSse(...CHAT_OK, "[DONE]"));

const multiRound: ModelMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "add things" },
  {
    role: "assistant",
    content: "Let me run it.",
    toolCalls: [{ id: "call_1", name: "exec", input: { code: "return 1 + 1", nested: { a: [1, "two", null] } } }],
  },
  { role: "tool", toolCallId: "call_1", toolName: "exec", content: '{"status":"ok","value":2}' },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "call_2", name: "exec", input: { code: "a" } },
      { id: "call_3", name: "wait", input: { runId: "r1" } },
    ],
  },
  { role: "tool", toolCallId: "call_2", toolName: "exec", content: "SyntaxError: oops", isError: true },
  { role: "tool", toolCallId: "call_3", toolName: "wait", content: "done" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "call_4", name: "exec", input: '{"code":', inputError: "arguments are not valid JSON" },
      { id: "call_5", name: "exec", input: [1, 2] },
    ],
  },
  { role: "tool", toolCallId: "call_4", toolName: "exec", content: "bad arguments", isError: true },
  { role: "tool", toolCallId: "call_5", toolName: "exec", content: "bad arguments", isError: true },
  { role: "assistant", content: 'All done: 2 \u2713 \u{1F600} "quoted" \\ </script>' },
  { role: "user", content: "thanks" },
];

const aliased: ModelMessage[] = [
  { role: "user", content: "use the odd ones" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "c1", name: odd.name, input: {} },
      { id: "c2", name: odd2.name, input: { x: 1 } },
      { id: "c3", name: "gone.tool", input: {} },
    ],
  },
  { role: "tool", toolCallId: "c1", toolName: odd.name, content: "1" },
  { role: "tool", toolCallId: "c2", toolName: odd2.name, content: "2" },
  { role: "tool", toolCallId: "c3", toolName: "gone.tool", content: "unknown tool", isError: true },
];

type Case = [string, ResolvedModel, Omit<ModelRequest, "signal">];
const REQUESTS: Case[] = [
  ["one user message, no tools", model(), { messages: [{ role: "user", content: "hi" }], tools: [] }],
  [
    "system, user, tools",
    model(),
    {
      messages: [
        { role: "system", content: "sys" },
        { role: "user", content: "hi" },
      ],
      tools: [exec, wait],
    },
  ],
  [
    "multi-round tool calls: parallel calls, error results, unparsed arguments replayed as {}",
    model(),
    { messages: multiRound, tools: [exec, wait] },
  ],
  ["aliased wire names, offered and replayed", model(), { messages: aliased, tools: [exec, odd, odd2] }],
  ["replayed calls with no tools offered", model(), { messages: multiRound, tools: [] }],
  [
    "temperature, topP and maxOutputTokens",
    model(),
    { messages: [{ role: "user", content: "hi" }], tools: [exec], temperature: 0.2, topP: 0.9, maxOutputTokens: 300 },
  ],
  ["temperature 0 alone", model(), { messages: [{ role: "user", content: "hi" }], tools: [], temperature: 0 }],
  [
    "the model row's maxTokens caps the request",
    model({ maxOutputTokens: 50 }),
    { messages: [{ role: "user", content: "hi" }], tools: [], maxOutputTokens: 100 },
  ],
  ["the model row's maxTokens without a request", model({ maxOutputTokens: 64 }), { messages: [{ role: "user", content: "hi" }], tools: [exec] }],
  [
    "an upstream model id, a base URL with a trailing slash",
    model({ wireModel: "org/llama-3.1-70b", baseUrl: "https://p.example/v1/" }),
    { messages: [{ role: "user", content: "hi" }], tools: [exec] },
  ],
  ["the bench's model id", model({ wireModel: "gpt-bench" }), { messages: [{ role: "user", content: "hi" }], tools: [exec] }],
  [
    "an empty assistant turn",
    model(),
    {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "" },
        { role: "user", content: "again" },
      ],
      tools: [],
    },
  ],
];

/** A representative id of every family the SDK's catalog shapes, the ids its rules single out, and ids it does not know. */
const FAMILY_IDS = [
  "gpt-4o",
  "gpt-4o-mini",
  "gpt-4.1",
  "gpt-5",
  "gpt-5-mini",
  "o1",
  "o3",
  "o3-mini",
  "o4-mini",
  "gpt-5-chat-latest",
  "gpt-5.1-chat-latest",
  "gpt-5.2",
  "gpt-5.6",
  "gpt-6-sol",
  "gpt-4o-search-preview",
  "gpt-4o-mini-search-preview-2025-03-11",
  "gpt-3.5-turbo",
  "o3-pro-2025-06-10",
  "llama-3.1-70b",
];

/** Tool schemas the SDK's normalisation rewrites (or walks into), from MCP servers as they come. */
const schemaTool = (name: string, parameters: Record<string, unknown>): ModelTool => ({ name, description: `schema ${name}`, parameters });
const SCHEMAS: ModelTool[] = [
  schemaTool("propertyNames", { type: "object", propertyNames: { pattern: "^[a-z]+$" }, additionalProperties: { type: "number" } }),
  schemaTool("lookaround", {
    type: "object",
    properties: {
      a: { type: "string", pattern: "^(?=x)" },
      b: { type: "string", pattern: "^(?<!y)z" },
      c: { type: "string", pattern: "^[(?=]a" },
      d: { type: "string", pattern: "^\\(?=x" },
      e: { type: "string", pattern: "^ab+$" },
      f: { type: "string", pattern: "^[(?=]a(?<=b)" },
    },
  }),
  schemaTool("allOfRoot", {
    allOf: [{ $ref: "#/$defs/node" }],
    $defs: { node: { type: "object", properties: { next: { allOf: [{ $ref: "#/$defs/node" }] } } } },
  }),
  schemaTool("allOfDefinitions", {
    allOf: [{ $ref: "#/definitions/a~1b" }],
    definitions: { "a/b": { type: "object", propertyNames: { type: "string" } } },
  }),
  schemaTool("allOfMissing", { type: "object", allOf: [{ $ref: "#/$defs/none" }] }),
  schemaTool("allOfTwo", { type: "object", allOf: [{ $ref: "#/$defs/a" }, { required: ["x"] }], $defs: { a: { pattern: "(?!a)" } } }),
  schemaTool("everywhere", {
    type: "object",
    properties: { list: { type: "array", items: [{ pattern: "(?=1)" }, true], additionalItems: { propertyNames: {} } } },
    patternProperties: { "^x": { pattern: "(?<=a)" } },
    dependencies: { a: ["b"], c: { propertyNames: { maxLength: 3 } } },
    if: { properties: { k: { const: 1 } } },
    then: { not: { pattern: "(?!b)" } },
    else: { anyOf: [{ contains: { pattern: "(?=c)" } }], oneOf: [false] },
  }),
  schemaTool("malformed", { type: "object", properties: { n: 5, s: "str", t: true, arr: [1, 2] }, items: "x" }),
];

/** Tool schemas the SDK's normalisation throws on: the call fails before anything is sent. */
const THROWING_SCHEMAS: ModelTool[] = [
  schemaTool("booleanNames", { type: "object", propertyNames: false }),
  schemaTool("numberNames", { type: "object", propertyNames: { type: "number" } }),
  schemaTool("nullProperty", { type: "object", properties: { a: null } }),
  schemaTool("allOfObject", { type: "object", allOf: { $ref: "#/$defs/a" } }),
];

describe("the Chat Completions request we send is the SDK's, byte for byte", () => {
  for (const [name, m, request] of REQUESTS) {
    it(name, async () => {
      const sdk = await callWith(false, m, request, ok);
      const lean = await callWith(true, m, request, ok);
      expect(sdk.error).toBeUndefined();
      expect(sdk.sent).toHaveLength(1);
      expect(lean).toEqual(sdk);
    });
  }
});

describe("for every model family the SDK shapes, the request we send is the SDK's", () => {
  for (const id of FAMILY_IDS) {
    it(`${id}: the whole corpus, byte for byte`, async () => {
      for (const [name, m, request] of REQUESTS) {
        const sdk = await callWith(false, { ...m, wireModel: id }, request, ok);
        const lean = await callWith(true, { ...m, wireModel: id }, request, ok);
        expect(sdk.error, name).toBeUndefined();
        expect(lean, name).toEqual(sdk);
      }
    });
  }

  it("every family's request is built by us, none handed back", () => {
    for (const id of FAMILY_IDS)
      for (const [, m, r] of REQUESTS) expect(chatCompletionsRequest({ ...m, wireModel: id }, r.messages, r.tools, r, (n) => n)).toBeDefined();
  });

  it("the rules show on the wire: developer and max_completion_tokens for reasoning models, effort none with tools from gpt-5.6", () => {
    const body = (id: string, tools: ModelTool[]) =>
      JSON.parse(
        chatCompletionsRequest(model({ wireModel: id }), multiRound, tools, { temperature: 0.5, topP: 0.9, maxOutputTokens: 10 }, (n) => n)!.body,
      );
    const o3 = body("o3", [exec]);
    expect([o3.messages[0].role, o3.max_completion_tokens, o3.max_tokens, o3.temperature, o3.top_p]).toEqual([
      "developer",
      10,
      undefined,
      undefined,
      undefined,
    ]);
    const gpt4o = body("gpt-4o", [exec]);
    expect([gpt4o.messages[0].role, gpt4o.max_tokens, gpt4o.temperature, gpt4o.top_p]).toEqual(["system", 10, 0.5, 0.9]);
    const gpt56 = body("gpt-5.6", [exec]);
    expect([gpt56.reasoning_effort, gpt56.temperature, gpt56.max_completion_tokens]).toEqual(["none", 0.5, 10]);
    expect(body("gpt-5.6", []).reasoning_effort).toBeUndefined();
    expect(body("gpt-4o-search-preview", []).temperature).toBeUndefined();
  });
});

describe("tool schemas the SDK rewrites are rewritten the same way", () => {
  for (const id of ["gpt-4o", "o3", "unknown-model"]) {
    it(`${id}: propertyNames, lookaround patterns, singleton allOf references and malformed subschemas, byte for byte`, async () => {
      const request = { messages: [{ role: "user" as const, content: "hi" }], tools: SCHEMAS };
      const sdk = await callWith(false, model({ wireModel: id }), request, ok);
      const lean = await callWith(true, model({ wireModel: id }), request, ok);
      expect(sdk.error).toBeUndefined();
      expect(lean).toEqual(sdk);
      expect(chatCompletionsRequest(model({ wireModel: id }), request.messages, request.tools, {}, (n) => n)).toBeDefined();
    });
  }

  it("the rewrite shows on the wire (a schema sent as it came would fail this)", () => {
    const sent = JSON.parse(chatCompletionsRequest(model(), [{ role: "user", content: "hi" }], SCHEMAS, {}, (n) => n)!.body);
    const params = (name: string) => sent.tools.find((t: { function: { name: string } }) => t.function.name === name).function.parameters;
    expect(params("propertyNames").propertyNames).toBeUndefined();
    const patterns = Object.values(params("lookaround").properties).map((p) => (p as { pattern?: string }).pattern);
    expect(patterns).toEqual([undefined, undefined, "^[(?=]a", "^\\(?=x", "^ab+$", undefined]);
    expect(params("allOfRoot").type).toBe("object");
    expect(params("allOfRoot").properties.next).toEqual({ $ref: "#/$defs/node" });
    expect(params("malformed").properties).toEqual({ n: {}, s: { 0: "s", 1: "t", 2: "r" }, t: true, arr: { 0: 1, 1: 2 } });
  });

  for (const tool of THROWING_SCHEMAS) {
    it(`a schema the SDK refuses (${tool.name}) is left to it and fails the same way, nothing sent`, async () => {
      const request = { messages: [{ role: "user" as const, content: "hi" }], tools: [exec, tool] };
      expect(chatCompletionsRequest(model(), request.messages, request.tools, {}, (n) => n)).toBeUndefined();
      const sdk = await callWith(false, model(), request, ok);
      const lean = await callWith(true, model(), request, ok);
      expect(sdk.error).toBeDefined();
      expect(sdk.sent).toEqual([]);
      expect(lean).toEqual(sdk);
    });
  }
});

const hi = { messages: [{ role: "user" as const, content: "hi" }], tools: [exec] };
const json = (v: unknown, status: number, headers: Record<string, string> = {}) =>
  respond(JSON.stringify(v), status, { "content-type": "application/json", ...headers });
const huge = JSON.stringify({ error: { message: "x".repeat(200_000) } });

const FAILURES: Array<[string, Answer, { timeoutMs?: number; abortAfterSend?: boolean }?]> = [
  [
    "400 with an OpenAI error message",
    json({ error: { message: "bad request: max_tokens too large", type: "invalid_request_error", param: null, code: null } }, 400),
  ],
  [
    "401 whose message echoes the key",
    json({ error: { message: "Incorrect API key provided: sk-test-0123456789abcdef", type: "invalid_request_error", code: "invalid_api_key" } }, 401),
  ],
  ["404 with an empty body", respond("", 404, {}, "Not Found")],
  ["429 with retry-after seconds", json({ error: { message: "Rate limit reached", type: "requests" } }, 429, { "retry-after": "7" })],
  ["429 with a retry-after date", json({ error: { message: "slow down" } }, 429, { "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" })],
  ["429 without retry-after", respond("busy", 429, {}, "Too Many Requests")],
  ["500 with plain text", respond("internal oops", 500, { "content-type": "text/plain" }, "Internal Server Error")],
  ["529 with an Anthropic-shaped error", json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, 529)],
  ["502 HTML error page", respond("<html><body><h1>502 Bad Gateway</h1></body></html>", 502, { "content-type": "text/html" }, "Bad Gateway")],
  ["an error body past the error-body bound", respond(huge, 400, { "content-type": "application/json" }, "Bad Request")],
  ["JSON error without a message", json({ error: { type: "server_error" } }, 503)],
  ["JSON error whose code is neither string nor number", json({ error: { message: "m", code: { n: 1 } } }, 400)],
  ["JSON error with a prototype key", respond('{"error":{"message":"m"},"__proto__":{"x":1}}', 400, {}, "Bad Request")],
  [
    "200 with a JSON body, no event stream",
    json({ id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] }, 200),
  ],
  ["200 with no body", respond(null, 200)],
  ["204", respond(null, 204)],
  [
    "network failure with a cause",
    async () => Promise.reject(new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 10.0.0.1:443") })),
  ],
  ["network failure with a network code", async () => Promise.reject(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))],
  ["any other fetch error", async () => Promise.reject(new Error("Network connection lost."))],
  ["the caller aborts mid-request", never, { abortAfterSend: true }],
  ["the deadline passes mid-request", never, { timeoutMs: 20 }],
  [
    "the caller aborts while the error body is read",
    async (signal) =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('{"error":'));
            signal.addEventListener("abort", () => c.error(signal.reason), { once: true });
          },
        }),
        { status: 400 },
      ),
    { abortAfterSend: true },
  ],
];

describe("a failure answer gives the SDK path's ProviderError", () => {
  for (const [name, answer, opts] of FAILURES) {
    it(name, async () => {
      const sdk = await callWith(false, model(), hi, answer, opts);
      const lean = await callWith(true, model(), hi, answer, opts);
      expect(sdk.error).toBeDefined();
      expect(lean.error).toEqual(sdk.error);
      expect(lean.sent).toEqual(sdk.sent);
    });
  }
});
