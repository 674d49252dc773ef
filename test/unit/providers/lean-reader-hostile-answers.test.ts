import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_RESPONSE_BYTES } from "../../../src/limits";
import { expectSameReading, modelFor, readWith, restoreLeanReader } from "./reader-comparison";

// Hostile provider answers to the lean path (our request, our reader, batched per network chunk)
// against the AI SDK's pipeline: events after the end, other line endings, a BOM, a 2xx that is
// no event stream, lying usage, the key echoed in an error frame or a tool call, a body past the
// bound that is no event stream. Whole and cut a byte at a time: the same events and failure.

import { CHAT_OK, chatChunk, chatSse, MESSAGES_OK, MESSAGES_START } from "./wire-fixtures";

restoreLeanReader();
const KEY = modelFor("openai-completions").apiKey;
const sse = chatSse;
const chunk = chatChunk;
const OK = CHAT_OK;
const ANSWER = MESSAGES_OK;
const start = MESSAGES_START;

const CHAT: Array<[string, string, Record<string, string>?]> = [
  ["chunks after [DONE]", sse(chunk({ content: "a" }), "[DONE]", chunk({ content: "late" }), chunk({}, "stop"))],
  ["[DONE] then a chunk that is not JSON", sse(...OK, "[DONE]", "{nope")],
  ["CRLF line endings", sse(...OK).replace(/\n/g, "\r\n")],
  ["a byte order mark first", "\uFEFF" + sse(...OK)],
  ["an event stream sent as text/plain", sse(...OK), { "content-type": "text/plain" }],
  ["a 2xx HTML page", "<html>oops</html>", { "content-type": "text/html" }],
  ["a 2xx without a content type", sse(...OK), { "content-type": "" }],
  ["an error frame echoing the key, then more chunks", sse(chunk({ content: "a" }), { error: { message: `boom ${KEY}` } }, ...OK)],
  [
    "usage that lies (negative, past double range, a string)",
    sse(...OK, { choices: [], usage: { prompt_tokens: -5, completion_tokens: 1e308, total_tokens: "x" } }),
  ],
  ["comments, event names, ids and retry fields", ": ping\n\nretry: 1\nid: 5\nevent: x\n" + sse(...OK)],
  [
    "a tool call whose id and arguments echo the key",
    sse(
      chunk({ tool_calls: [{ index: 0, id: KEY, type: "function", function: { name: "exec", arguments: `{"code":"${KEY}"}` } }] }),
      chunk({}, "tool_calls"),
    ),
  ],
];
const MESSAGES: Array<[string, string, Record<string, string>?]> = [
  ["events after message_stop, an error among them", sse(...ANSWER, { type: "error", error: { type: "overloaded_error", message: "late" } })],
  ["CRLF line endings", sse(...ANSWER).replace(/\n/g, "\r\n")],
  ["an event stream sent as text/plain", sse(...ANSWER), { "content-type": "text/plain" }],
  ["a 2xx JSON message, no stream", JSON.stringify({ type: "message", content: [] }), { "content-type": "application/json" }],
  ["a [DONE] among the events", sse(ANSWER[0], "[DONE]", ...ANSWER.slice(1))],
  ["usage that lies", sse({ ...start, message: { ...start.message, usage: { input_tokens: -1, output_tokens: "lots" } } }, ...ANSWER.slice(1))],
];

describe("Chat Completions: hostile answers read as the SDK reads them", () => {
  for (const [name, text, headers] of CHAT) it(name, () => expectSameReading(modelFor("openai-completions"), text, headers));
});
describe("Messages: hostile answers read as the SDK reads them", () => {
  for (const [name, text, headers] of MESSAGES) it(name, () => expectSameReading(modelFor("anthropic-messages"), text, headers));
});

describe("a 2xx that is no event stream is bounded too", () => {
  for (const api of ["openai-completions", "anthropic-messages"] as const)
    it(`${api}: past MAX_PROVIDER_RESPONSE_BYTES it fails naming the bound, as the SDK's path does`, async () => {
      const big = new Uint8Array(1024 * 1024).fill(0x78);
      const parts = Array.from({ length: MAX_PROVIDER_RESPONSE_BYTES / big.byteLength + 1 }, () => big);
      const headers = { "content-type": "text/plain" };
      const lean = await readWith(true, modelFor(api), parts, headers);
      const sdk = await readWith(false, modelFor(api), parts, headers);
      expect(lean.error).toEqual({
        code: "provider_unavailable",
        message: `the answer of provider "p" (HTTP 200) was larger than ${MAX_PROVIDER_RESPONSE_BYTES} bytes; it was not read further`,
        status: 200,
      });
      expect(lean).toEqual(sdk);
    });
});
