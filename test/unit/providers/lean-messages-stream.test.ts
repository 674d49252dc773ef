import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_RESPONSE_BYTES } from "../../../src/limits";
import { expectSameReading, modelFor, readWith, restoreLeanReader } from "./reader-comparison";

// The lean Messages reader (lean-messages-stream.ts) against the AI SDK's pipeline it replaces:
// for each stream a hostile provider could send, both give the same events or the same failure
// (code, message, status, retryAfterSeconds), whole or cut a byte at a time.

const encoder = new TextEncoder();
const model = modelFor("anthropic-messages");
const run = (lean: boolean, parts: Uint8Array[], headers?: Record<string, string>) => readWith(lean, model, parts, headers);
restoreLeanReader();

// Events with their `event:` line, as Anthropic sends them.
const sse = (...data: unknown[]) =>
  data
    .map((d) => {
      const text = typeof d === "string" ? d : JSON.stringify(d);
      const type = typeof d === "object" && d !== null && "type" in d ? `event: ${(d as { type: string }).type}\n` : "";
      return `${type}data: ${text}\n\n`;
    })
    .join("");
const start = (usage: unknown = { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 30 }, extra: Record<string, unknown> = {}) => ({
  type: "message_start",
  message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage, ...extra },
});
const textStart = (index = 0) => ({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
const text = (t: string, index = 0) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } });
const stop = (index = 0) => ({ type: "content_block_stop", index });
const toolStart = (index: number, id: string, name: string, input: unknown = {}) => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id, name, input },
});
const json = (index: number, partial: string) => ({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } });
const delta = (reason: string | null, usage: unknown = { output_tokens: 20 }) => ({
  type: "message_delta",
  delta: { stop_reason: reason, stop_sequence: null },
  usage,
});
const end = { type: "message_stop" };
const ping = { type: "ping" };
const error = (type: string, message: string, extra: Record<string, unknown> = {}) => ({ type: "error", error: { type, message, ...extra } });
const ARGS = '{"code":"return \\"a,b\\".split(\\",\\")"}';
// A tool call's input split at every position into three pieces.
const splitAt = (s: string, i: number) => [s.slice(0, i), s.slice(i, i + 3), s.slice(i + 3)].filter((p) => p !== "");

const STREAMS: Array<[string, string, Record<string, string>?]> = [
  ["text, end_turn, usage", sse(start(), ping, textStart(), text("Hel"), text("lo"), stop(), delta("end_turn"), end)],
  [
    "text then a tool call in many input deltas",
    sse(
      start(),
      textStart(),
      text("Let me look."),
      stop(),
      toolStart(1, "toolu_1", "exec"),
      ...splitAt(ARGS, 5).map((p) => json(1, p)),
      stop(1),
      delta("tool_use"),
      end,
    ),
  ],
  ...[1, 7, 14, 22, 30].map((i): [string, string] => [
    `tool input split at ${i}, with empty deltas`,
    sse(
      start(),
      toolStart(0, "toolu_1", "exec"),
      json(0, ""),
      ...splitAt(ARGS, i).map((p) => json(0, p)),
      json(0, ""),
      stop(0),
      delta("tool_use"),
      end,
    ),
  ]),
  ["a tool call with no input deltas (input {})", sse(start(), toolStart(0, "toolu_1", "exec"), stop(0), delta("tool_use"), end)],
  ["a tool call with its input in the start block", sse(start(), toolStart(0, "toolu_1", "exec", { code: "1" }), stop(0), delta("tool_use"), end)],
  ["tool input that does not parse", sse(start(), toolStart(0, "toolu_1", "exec"), json(0, '{"code":'), stop(0), delta("tool_use"), end)],
  [
    "a tool call in message_start's content",
    sse(start(undefined, { content: [{ type: "tool_use", id: "toolu_0", name: "exec", input: { code: "2" } }] }), delta("tool_use"), end),
  ],
  ["a tool call whose block never stops", sse(start(), toolStart(0, "toolu_1", "exec"), json(0, '{"code":"1"}'), delta("tool_use"), end)],
  [
    "usage counts of the wrong type",
    sse(
      start({ input_tokens: "12", cache_read_input_tokens: -3 }),
      textStart(),
      text("x"),
      stop(),
      delta("end_turn", { output_tokens: { n: 1 } }),
      end,
    ),
  ],
  ["usage missing from both events", sse({ type: "message_start", message: { id: "m" } }, textStart(), text("x"), delta("end_turn", null), end)],
  ["usage that is not an object", sse(start(5), textStart(), text("x"), delta("end_turn", "many"), end)],
  [
    "a count past double range",
    sse(start(), textStart(), text("x")) +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1e400,"input_tokens":1e400}}\n\n' +
      sse(end),
  ],
  [
    "iterations, cache counts and thinking tokens",
    sse(
      start(),
      textStart(),
      text("x"),
      delta("end_turn", {
        output_tokens: 9,
        cache_creation_input_tokens: 4,
        output_tokens_details: { thinking_tokens: 3 },
        iterations: [
          { type: "message", input_tokens: 5, output_tokens: 6 },
          { type: "compaction", input_tokens: 7, output_tokens: 8 },
          { type: "advisor_message", input_tokens: 1, output_tokens: 1 },
        ],
      }),
      end,
    ),
  ],
  [
    "iterations of the wrong shape",
    sse(start(), textStart(), text("x"), delta("end_turn", { output_tokens: 2, iterations: [{ type: "what" }] }), end),
  ],
  [
    "thinking, signature, then text",
    sse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
      stop(0),
      textStart(1),
      text("ok", 1),
      stop(1),
      delta("end_turn"),
      end,
    ),
  ],
  [
    "redacted thinking",
    sse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "xx" } },
      stop(0),
      delta("end_turn"),
      end,
    ),
  ],
  [
    "a compaction block with content",
    sse(
      start(),
      { type: "content_block_start", index: 0, content_block: { type: "compaction", content: "summary", signature: "s" } },
      { type: "content_block_delta", index: 0, delta: { type: "compaction_delta", content: " more" } },
      stop(0),
      delta("compaction"),
      end,
    ),
  ],
  ["refusal (content-filter)", sse(start(), textStart(), text("no"), delta("refusal"), end)],
  ["max_tokens (length)", sse(start(), textStart(), text("x"), delta("max_tokens"), end)],
  ["an unknown stop reason (other)", sse(start(), textStart(), text("x"), delta("weird"), end)],
  ["no stop reason at all (other)", sse(start(), textStart(), text("x"), delta(null), end)],
  ["a stop reason in message_start only", sse(start(undefined, { stop_reason: "end_turn" }), end)],
  ["a stream that ends after output without message_stop", sse(start(), textStart(), text("partial"))],
  ["a stream that ends before any output", sse(start())],
  ["an empty stream", ""],
  ["message_stop then more text", sse(start(), textStart(), text("x"), delta("end_turn"), end, text("late"))],
  ["a second message_start with the same id (ignored)", sse(start(), start(), textStart(), text("x"), delta("end_turn"), end)],
  ["a second message_start with another id", sse(start(), textStart(), text("x"), start(undefined, { id: "msg_2" }), delta("end_turn"), end)],
  [
    "two messages one after the other",
    sse(start(), textStart(), text("x"), delta("end_turn"), end, start(undefined, { id: "msg_2" }), textStart(), text("y"), delta("max_tokens"), end),
  ],
  ["an error event before any output, overloaded", sse(error("overloaded_error", "Overloaded"))],
  ["an error event before any output, rate limited", sse(ping, error("rate_limit_error", "slow down")), { "retry-after": "7" }],
  ["an error event before any output, unknown type", sse(error("strange_error", "who knows"))],
  ["an error event before any output, its own status 200", sse(error("api_error", "fine?", { statusCode: 200 }))],
  ["an error event after message_start (no output yet)", sse(start(), error("rate_limit_error", "slow down")), { "retry-after": "3" }],
  ["an error event after output", sse(start(), textStart(), text("x"), error("overloaded_error", "Overloaded"))],
  ["an error event after output, unknown type", sse(start(), textStart(), text("x"), error("strange", "hmm"))],
  ["an error event of the wrong shape", sse(start(), { type: "error", error: { message: 5 } })],
  ["an event that is not JSON, first", sse("{nope")],
  ["an event that is not JSON, after output", sse(start(), textStart(), text("x"), "{nope")],
  ["an event of an unknown type", sse(start(), textStart(), text("x"), { type: "surprise" })],
  ["a block of an unknown type", sse(start(), { type: "content_block_start", index: 0, content_block: { type: "image" } })],
  ["a delta of an unknown type", sse(start(), textStart(), { type: "content_block_delta", index: 0, delta: { type: "audio_delta" } })],
  ["a text delta that is not a string", sse(start(), textStart(), { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: 5 } })],
  ["an index that is not a number", sse(start(), { type: "content_block_start", index: "0", content_block: { type: "text", text: "" } })],
  ["a tool_use without a name", sse(start(), { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t" } })],
  ["a tool_use whose input is a list", sse(start(), toolStart(0, "toolu_1", "exec", [1]))],
  [
    "a tool_use naming a toolset",
    sse(start(), { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t", name: "click", toolset_name: "computer" } }),
  ],
  [
    "a stop reason that is not a string",
    sse(start(), textStart(), text("x"), { type: "message_delta", delta: { stop_reason: 5 }, usage: { output_tokens: 1 } }),
  ],
  ["message_delta without its delta", sse(start(), textStart(), text("x"), { type: "message_delta", usage: { output_tokens: 1 } })],
  ["an event that is an array", sse(start(), [1])],
  ["a __proto__ key", sse(start(), textStart(), text("x")) + 'data: {"type":"ping","__proto__":{"polluted":1}}\n\n' + sse(delta("end_turn"), end)],
  ["a constructor.prototype key", sse(start()) + 'data: {"type":"ping","constructor":{"prototype":{"x":1}}}\n\n' + sse(end)],
  [
    "CRLF line endings, comments, a BOM, [DONE]",
    "\uFEFF: hi\r\n" + sse(start(), textStart(), text("x"), delta("end_turn"), end, "[DONE]").replaceAll("\n", "\r\n"),
  ],
  ["a last event without its blank line", sse(start(), textStart(), text("x"), delta("end_turn")) + `data: ${JSON.stringify(end)}`],
  ["multi-line data", sse(start(), textStart(), text("x"), delta("end_turn")) + 'data: {"type":\ndata: "message_stop"}\n\n'],
  ["text deltas outside any block", sse(start(), text("loose", 3), delta("end_turn"), end)],
  ["a content_block_stop for no block, then an error", sse(stop(9), error("overloaded_error", "Overloaded"))],
  [
    "an mcp_tool_use block",
    sse(
      start(),
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "mcp_tool_use", id: "mcp_1", name: "exec", input: { a: 1 }, server_name: "s" },
      },
      stop(0),
      delta("end_turn"),
      end,
    ),
  ],
  [
    "the key echoed in text and a tool call",
    sse(
      start(),
      textStart(),
      text("key sk-test-0123456789abcdef!"),
      stop(),
      toolStart(1, "toolu_sk-test-0123456789abcdef", "exec"),
      json(1, '{"k":"sk-test-0123456789abcdef"}'),
      stop(1),
      delta("tool_use"),
      end,
    ),
  ],
];

describe("the lean Messages reader gives what the AI SDK's pipeline gives", () => {
  it.each(STREAMS)("%s", async (_name, text, headers) => {
    await expectSameReading(model, text, headers);
  });

  it("a body past MAX_PROVIDER_RESPONSE_BYTES fails naming the bound, as before", async () => {
    const big = encoder.encode(sse(text("x".repeat(1024 * 1024))));
    const parts = [
      encoder.encode(sse(start(), textStart())),
      ...Array.from({ length: Math.ceil(MAX_PROVIDER_RESPONSE_BYTES / big.byteLength) + 1 }, () => big),
    ];
    const lean = await run(true, parts);
    expect(lean.error).toMatchObject({
      code: "provider_unavailable",
      message: expect.stringContaining(`larger than ${MAX_PROVIDER_RESPONSE_BYTES} bytes`),
    });
    expect(lean).toEqual(await run(false, parts));
  });
});
