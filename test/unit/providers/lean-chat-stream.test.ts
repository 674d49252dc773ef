import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_RESPONSE_BYTES } from "../../../src/limits";
import { expectSameReading, modelFor, readWith, restoreLeanReader } from "./reader-comparison";

// The lean Chat Completions reader (lean-chat-stream.ts) against the AI SDK's pipeline it replaces:
// for each stream a hostile provider could send, both give the same events or the same failure
// (code, message, status, retryAfterSeconds), whole or cut a byte at a time.

const encoder = new TextEncoder();
const model = modelFor("openai-completions");
const run = (lean: boolean, parts: Uint8Array[], headers?: Record<string, string>) => readWith(lean, model, parts, headers);
restoreLeanReader();

const sse = (...data: unknown[]) => data.map((d) => `data: ${typeof d === "string" ? d : JSON.stringify(d)}\n\n`).join("");
const chunk = (delta: unknown, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "m",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  ...extra,
});
const usage = (u: unknown) => ({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: u });
const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ({
  tool_calls: [{ index, ...(id ? { id, type: "function" } : {}), function: { ...(name ? { name } : {}), arguments: args } }],
});
const GOOD_USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 30 } };

const STREAMS: Array<[string, string, Record<string, string>?]> = [
  [
    "text, stop, usage",
    sse(
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hel" }),
      chunk({ content: "lo" }),
      chunk({}, "stop"),
      usage(GOOD_USAGE),
      "[DONE]",
    ),
  ],
  [
    "a tool call in many argument deltas",
    sse(
      chunk({ role: "assistant", content: "Let me look." }),
      chunk(call(0, "call_1", "exec", "")),
      ...['{"co', 'de":"ret', "urn 1", '"}'].map((a) => chunk(call(0, undefined, undefined, a))),
      chunk({}, "tool_calls"),
      usage(GOOD_USAGE),
      "[DONE]",
    ),
  ],
  [
    "two tool calls, one with arguments that do not parse",
    sse(chunk(call(0, "call_1", "exec", '{"code":"1"}')), chunk(call(1, "call_2", "exec", '{"code":')), chunk({}, "tool_calls"), "[DONE]"),
  ],
  [
    "usage counts of the wrong type",
    sse(chunk({ content: "x" }), chunk({}, "stop"), usage({ prompt_tokens: "12", completion_tokens: -3, total_tokens: { n: 1 } })),
  ],
  [
    "a count past double range",
    sse(chunk({ content: "x" }), chunk({}, "stop")) + 'data: {"choices":[],"usage":{"prompt_tokens":1e400,"completion_tokens":2}}\n\n',
  ],
  ["usage details of the wrong shape", sse(chunk({ content: "x" }), chunk({}, "stop"), usage({ prompt_tokens: 5, prompt_tokens_details: "many" }))],
  ["a refusal then stop (content-filter)", sse(chunk({ refusal: "I can't" }), chunk({}, "stop"))],
  ["an unknown finish reason (other)", sse(chunk({ content: "x" }), chunk({}, "weird"))],
  ["length", sse(chunk({ content: "x" }), chunk({}, "length"))],
  ["a stream that ends without a finish reason", sse(chunk({ content: "partial" }))],
  ["an empty stream", ""],
  [
    "an error frame before any output, rate limited",
    sse({ error: { message: "slow down", type: "rate_limit_exceeded", code: "rate_limit_exceeded" } }),
    { "retry-after": "7" },
  ],
  ["an error frame before any output, with a numeric code", sse({ error: { message: "bad", code: 400 } })],
  ["an error frame before any output, message only", sse({ error: { message: "who knows" } })],
  [
    "an error frame after a chunk with no output yet (role, empty text)",
    sse(chunk({ role: "assistant", content: "" }), { error: { message: "slow down", type: "rate_limit_exceeded" } }),
    { "retry-after": "3" },
  ],
  ["an error frame after output", sse(chunk({ content: "x" }), { error: { message: "overloaded", type: "server_overloaded" } })],
  ["an error frame after output, message only", sse(chunk({ content: "x" }), { error: { message: "hmm" } })],
  ["an event that is not JSON", sse(chunk({ content: "x" }), "{nope")],
  ["choices that are not a list", sse(chunk({ content: "x" }), { choices: {} })],
  ["a choice index that is not a number", sse({ choices: [{ index: "0", delta: { content: "x" } }] })],
  ["a role the format does not allow", sse({ choices: [{ index: 0, delta: { role: "user", content: "x" } }] })],
  ["a created past double range", 'data: {"created":1e400,"choices":[]}\n\n'],
  ["a __proto__ key", sse(chunk({ content: "x" })) + 'data: {"__proto__":{"polluted":1},"choices":[]}\n\n' + sse(chunk({}, "stop"))],
  [
    "CRLF line endings, comments, a BOM, event names",
    "\uFEFF: hi\r\nevent: x\r\n" + sse(chunk({ content: "x" }), chunk({}, "stop")).replaceAll("\n", "\r\n"),
  ],
  ["a last event without its blank line", sse(chunk({ content: "x" })) + `data: ${JSON.stringify(chunk({}, "stop"))}`],
  ["multi-line data", sse(chunk({ content: "x" })) + 'data: {"choices":\ndata: [{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'],
  ["a finish reason that is not a string", sse(chunk({ content: "x" }), { choices: [{ index: 0, delta: {}, finish_reason: 5 }] })],
  ["a tool call without its function", sse({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c" }] } }] })],
  [
    "a tool call of another type",
    sse({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c", type: "x", function: { name: "exec" } }] } }] }),
  ],
  ["usage that is not an object", sse(chunk({ content: "x" }), chunk({}, "stop"), usage(5))],
  ["logprobs of the wrong shape", sse({ choices: [{ index: 0, delta: { content: "x" }, logprobs: { content: [{ token: "x" }] } }] })],
  ["a citation of the wrong shape", sse({ choices: [{ index: 0, delta: { annotations: [{ type: "url_citation", url_citation: { url: "u" } }] } }] })],
  ["a chunk that is an array", sse(chunk({ content: "x" }), [1])],
  ["an error frame with a code of the wrong type", sse({ error: { message: "m", code: {} } })],
  ["a tool call without a name", sse(chunk(call(0, "call_1", undefined, '{"a":1}')), chunk({}, "tool_calls"))],
  [
    "the key echoed in text and a tool call",
    sse(
      chunk({ content: "key sk-test-0123456789abcdef!" }),
      chunk(call(0, "call_sk-test-0123456789abcdef", "exec", '{"k":"sk-test-0123456789abcdef"}')),
      chunk({}, "tool_calls"),
    ),
  ],
];

describe("the lean Chat Completions reader gives what the AI SDK's pipeline gives", () => {
  it.each(STREAMS)("%s", async (_name, text, headers) => {
    await expectSameReading(model, text, headers);
  });

  it("a body past MAX_PROVIDER_RESPONSE_BYTES fails naming the bound, as before", async () => {
    const big = encoder.encode(sse(chunk({ content: "x".repeat(1024 * 1024) })));
    const parts = Array.from({ length: Math.ceil(MAX_PROVIDER_RESPONSE_BYTES / big.byteLength) + 1 }, () => big);
    const lean = await run(true, parts);
    expect(lean.error).toMatchObject({
      code: "provider_unavailable",
      message: expect.stringContaining(`larger than ${MAX_PROVIDER_RESPONSE_BYTES} bytes`),
    });
    expect(lean).toEqual(await run(false, parts));
  });
});
