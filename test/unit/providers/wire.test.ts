import { APICallError, EmptyResponseBodyError, InvalidResponseDataError, JSONParseError, TypeValidationError } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import {
  MAX_PROVIDER_ERROR_BODY_BYTES,
  MAX_PROVIDER_MESSAGE_CHARS,
  MAX_PROVIDER_RESPONSE_BYTES,
  MAX_RETRY_AFTER_SECONDS,
  MAX_TOKEN_COUNT,
} from "../../../src/limits";
import { systemClock } from "../../../src/runtime";
import { toModelUsage } from "../../../src/providers/create-model-client";
import { observedFetch, sseDataTap } from "../../../src/providers/observed-fetch";
import { toProviderError, type ErrorContext } from "../../../src/providers/provider-errors";
import { retryAfterSeconds } from "../../../src/providers/retry-after";
import { toLanguageModelPrompt } from "../../../src/providers/to-language-model-prompt";
import { maskedToolCall, toModelToolCall } from "../../../src/providers/tool-call-input";
import { ProviderError, type ModelMessage } from "../../../src/providers";

describe("toModelToolCall", () => {
  it("parses a JSON object", () => {
    expect(toModelToolCall("c1", "exec", '{"code":"return 1"}')).toEqual({ id: "c1", name: "exec", input: { code: "return 1" } });
  });

  it("no argument text at all is {}", () => {
    expect(toModelToolCall("c1", "ping", "")).toEqual({ id: "c1", name: "ping", input: {} });
    expect(toModelToolCall("c1", "ping", "  ")).toEqual({ id: "c1", name: "ping", input: {} });
  });

  it("text that is not JSON keeps the raw text and says why", () => {
    const call = toModelToolCall("c1", "exec", '{"code": "ret');
    expect(call).toMatchObject({ id: "c1", name: "exec", input: '{"code": "ret' });
    expect(call.inputError).toMatch(/^the arguments are not valid JSON \(/);
  });

  it.each([
    ["[1,2]", "an array"],
    ["null", "null"],
    ["42", "a number"],
    ['"text"', "a string"],
  ])("JSON that is not an object (%s) is refused as %s", (text, what) => {
    expect(toModelToolCall("c1", "exec", text)).toEqual({
      id: "c1",
      name: "exec",
      input: text,
      inputError: `the arguments must be a JSON object, not ${what}`,
    });
  });

  it("a __proto__ key stays data", () => {
    const call = toModelToolCall("c1", "exec", '{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(call.input)).toBe(Object.prototype);
  });
});

describe("maskedToolCall: every provider-written string of a tool call is masked where it enters", () => {
  const KEY = "sk-provider-key-1234";
  const secrets = [KEY];
  const offered = new Set(["exec", "wait", "tool_***"]);

  it("a key in the id becomes the wire-safe mask; the same id always masks the same way (the replay pairs call and result)", () => {
    const a = maskedToolCall(`call_${KEY}`, "exec", '{"code":"return 1"}', secrets, offered);
    expect(a).toEqual({ id: "call____", name: "exec", input: { code: "return 1" } });
    expect(maskedToolCall(`call_${KEY}`, "exec", "{}", secrets, offered).id).toBe(a.id);
    expect(a.id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("a key in the name is masked, and the masked name never names a tool the request offered", () => {
    expect(maskedToolCall("c1", `${KEY}_tool`, "{}", secrets, offered).name).toBe("***_tool");
    // `tool_<key>` masks to `tool_***`, which the request offered: it gets a suffix instead.
    expect(maskedToolCall("c1", `tool_${KEY}`, "{}", secrets, offered).name).toBe("tool_***_2");
    expect(maskedToolCall("c1", `tool_${KEY}`, "{}", secrets, new Set([...offered, "tool_***_2"])).name).toBe("tool_***_3");
    // A name without a secret is left alone, even one the request did not offer.
    expect(maskedToolCall("c1", "tool_***", "{}", secrets, offered).name).toBe("tool_***");
  });

  it("arguments: the key in a string, a key, a JSON-escaped spelling, and arguments that do not parse (the parse error too)", () => {
    const escaped = `{"a":"${KEY.replace("s", "\\u0073")}","${KEY}":1}`;
    expect(maskedToolCall("c1", "exec", escaped, secrets, offered).input).toEqual({ a: "***", "***": 1 });
    const bad = maskedToolCall("c1", "exec", `${KEY} is not json`, secrets, offered);
    expect(bad.input).toBe("*** is not json");
    expect(JSON.stringify(bad)).not.toContain(KEY);
  });
});

describe("retryAfterSeconds", () => {
  const now = Date.parse("2026-11-20T12:00:00Z");
  it.each([
    ["7", 7],
    [" 30 ", 30],
    ["0", 0],
    ["86400", 86_400],
    ["Fri, 20 Nov 2026 12:00:45 GMT", 45],
    ["Fri, 20 Nov 2026 11:00:00 GMT", 0],
  ])("%j → %d", (value, seconds) => {
    expect(retryAfterSeconds(value, now)).toBe(seconds);
  });

  // A hostile provider's `99999999999999999999` was passed on as `retry-after: 100000000000000000000`,
  // and a date in 2099 as 2300176146 s.
  it.each(["86401", "99999999999999999999", "9".repeat(400), "Thu, 31 Dec 2099 23:59:59 GMT", "Sat, 01 Jan 275760 00:00:00 GMT"])(
    "%j is clamped to MAX_RETRY_AFTER_SECONDS (one day)",
    (value) => {
      expect(retryAfterSeconds(value, now)).toBe(MAX_RETRY_AFTER_SECONDS);
      expect(MAX_RETRY_AFTER_SECONDS).toBe(86_400);
    },
  );

  it.each([undefined, "", "soon", "-5", "1.2", "1e3", "0x10", "+5", "5 s", "Infinity"])("%j is not delay-seconds or a date: undefined", (value) => {
    expect(retryAfterSeconds(value, now)).toBeUndefined();
  });
});

describe("toModelUsage", () => {
  const u = (input: Partial<Record<"total" | "noCache" | "cacheRead" | "cacheWrite", number>>, output?: number) => ({
    inputTokens: { total: input.total, noCache: input.noCache, cacheRead: input.cacheRead, cacheWrite: input.cacheWrite },
    outputTokens: { total: output, text: undefined, reasoning: undefined },
  });

  it("input tokens are those neither read from nor written to the cache", () => {
    expect(toModelUsage(u({ total: 4500, noCache: 1000, cacheRead: 3000, cacheWrite: 500 }, 20))).toEqual({
      inputTokens: 1000,
      outputTokens: 20,
      cacheReadTokens: 3000,
      cacheWriteTokens: 500,
    });
  });

  it("a provider that reports only a total gets the cache counts taken off it", () => {
    expect(toModelUsage(u({ total: 4500, cacheRead: 3000 }, 5))).toEqual({
      inputTokens: 1500,
      outputTokens: 5,
      cacheReadTokens: 3000,
      cacheWriteTokens: 0,
    });
  });

  it("nothing reported is all zeros", () => {
    expect(toModelUsage(u({}))).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it("counts that are not counts are unknown (0); counts past the bound are clamped", () => {
    expect(toModelUsage(u({ total: -5_000_000, noCache: -5_000_000, cacheRead: -3, cacheWrite: 1.5 }, -1))).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(toModelUsage(u({ total: 1e308, noCache: 1e308, cacheRead: Number.POSITIVE_INFINITY }, 1e308))).toEqual({
      inputTokens: MAX_TOKEN_COUNT,
      outputTokens: MAX_TOKEN_COUNT,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it("a total with bogus cache counts never goes negative", () => {
    expect(toModelUsage(u({ total: 10, cacheRead: 3000 }, 5))).toMatchObject({ inputTokens: 0, cacheReadTokens: 3000 });
    expect(toModelUsage(u({ total: -10, cacheRead: -3000 }, 5))).toMatchObject({ inputTokens: 0, cacheReadTokens: 0 });
  });
});

describe("toLanguageModelPrompt", () => {
  const history: ModelMessage[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "a", name: "exec", input: { code: "1" } },
        { id: "b", name: "exec", input: "{oops", inputError: "not JSON" },
      ],
    },
    { role: "tool", toolCallId: "a", toolName: "exec", content: "1" },
    { role: "tool", toolCallId: "b", toolName: "exec", content: "bad arguments", isError: true },
    { role: "assistant", content: "done" },
  ];

  it("merges consecutive tool results, replays unparsed arguments as {}, drops empty assistant text", () => {
    expect(toLanguageModelPrompt(history, "anthropic-messages")).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "hi" }] },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "a", toolName: "exec", input: { code: "1" } },
          { type: "tool-call", toolCallId: "b", toolName: "exec", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "a", toolName: "exec", output: { type: "text", value: "1" } },
          { type: "tool-result", toolCallId: "b", toolName: "exec", output: { type: "error-text", value: "bad arguments" } },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "done" }] },
    ]);
  });

  it("Chat Completions has no error flag: a failed result stays the loop's own text", () => {
    const tool = toLanguageModelPrompt(history, "openai-completions")[3];
    expect(tool).toMatchObject({
      role: "tool",
      content: [{ output: { type: "text", value: "1" } }, { output: { type: "text", value: "bad arguments" } }],
    });
  });
});

describe("observedFetch bounds what a provider's answer may make it read", () => {
  /** A fetch answering `status` with `total` bytes in 64 KiB chunks, and how many chunks were pulled. */
  const answering = (status: number, total: number) => {
    let pulled = 0;
    const fetch = (async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            const left = total - pulled * 65536;
            if (left <= 0) return controller.close();
            pulled++;
            controller.enqueue(new Uint8Array(Math.min(65536, left)).fill(65));
          },
        }),
        { status },
      )) as unknown as typeof globalThis.fetch;
    return { fetch, pulled: () => pulled };
  };

  it("an error answer is cut at MAX_PROVIDER_ERROR_BODY_BYTES and ends normally", async () => {
    const source = answering(400, 10 * 1024 * 1024);
    const t = observedFetch(source.fetch, systemClock);
    const body = await (await t.fetch("https://p.example/v1", { method: "POST", body: "{}" })).arrayBuffer();
    expect(body.byteLength).toBe(MAX_PROVIDER_ERROR_BODY_BYTES);
    expect(source.pulled()).toBeLessThan(5);
    expect(t.overflowed()).toBeUndefined();
  });

  it("a success answer past MAX_PROVIDER_RESPONSE_BYTES errors, and the bound is reported", async () => {
    const source = answering(200, MAX_PROVIDER_RESPONSE_BYTES + 65536 * 4);
    const t = observedFetch(source.fetch, systemClock);
    const res = await t.fetch("https://p.example/v1", { method: "POST", body: "{}" });
    await expect(res.arrayBuffer()).rejects.toThrow(/larger than/);
    expect(t.overflowed()).toBe(MAX_PROVIDER_RESPONSE_BYTES);
    const e = toProviderError(new Error("stream broke"), {
      ended: undefined,
      timeoutMs: 5000,
      provider: "acme",
      redaction: {},
      now: 0,
      sent: true,
      status: 200,
      overflowed: t.overflowed(),
    });
    expect(e).toMatchObject({
      code: "provider_unavailable",
      message: `the answer of provider "acme" (HTTP 200) was larger than ${MAX_PROVIDER_RESPONSE_BYTES} bytes; it was not read further`,
    });
  });

  it("an answer within the bound passes whole", async () => {
    const t = observedFetch(answering(200, 300_000).fetch, systemClock);
    expect((await (await t.fetch("https://p.example/v1", { method: "POST", body: "{}" })).arrayBuffer()).byteLength).toBe(300_000);
    expect(t.overflowed()).toBeUndefined();
  });
});

describe("sseDataTap", () => {
  async function tap(chunks: string[]): Promise<{ events: string[]; passed: string }> {
    const events: string[] = [];
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(encoder.encode(c));
        controller.close();
      },
    });
    const passed = await new Response(body.pipeThrough(sseDataTap((d) => events.push(d)))).text();
    return { events, passed };
  }

  it("reports each event's data across chunk boundaries and passes the bytes through unchanged", async () => {
    const chunks = ['data: {"a"', ":1}\n\nevent: x\nda", "ta: two\r\n\r\n", "data: [DONE]\n\n"];
    const { events, passed } = await tap(chunks);
    expect(events).toEqual(['{"a":1}', "two", "[DONE]"]);
    expect(passed).toBe(chunks.join(""));
  });

  it("joins multi-line data with newlines and reports a last event without its blank line", async () => {
    const { events } = await tap(["data: one\ndata:two\n\n: comment\n\ndata: tail"]);
    expect(events).toEqual(["one\ntwo", "tail"]);
  });

  it("an observer that throws does not break the stream", async () => {
    const body = new Response("data: x\n\ndata: y\n\n").body!;
    const text = await new Response(
      body.pipeThrough(
        sseDataTap(() => {
          throw new Error("observer bug");
        }),
      ),
    ).text();
    expect(text).toBe("data: x\n\ndata: y\n\n");
  });
});

describe("toProviderError", () => {
  const context = (over: Partial<ErrorContext> = {}): ErrorContext => ({
    ended: undefined,
    timeoutMs: 5000,
    provider: "acme",
    redaction: { secrets: ["sk-the-real-key-123"] },
    now: Date.parse("2026-11-20T12:00:00Z"),
    sent: true,
    ...over,
  });
  const apiError = (statusCode: number | undefined, message: string, responseHeaders?: Record<string, string>) =>
    new APICallError({ message, url: "https://x.example/v1/messages", requestBodyValues: {}, statusCode, responseHeaders });

  it.each([
    [400, "provider_error"],
    [401, "provider_error"],
    [404, "provider_error"],
    [429, "provider_rate_limited"],
    [500, "provider_unavailable"],
    [503, "provider_unavailable"],
    [529, "provider_unavailable"],
  ])("HTTP %d → %s, with the provider's status", (status, code) => {
    expect(toProviderError(apiError(status, "nope"), context())).toMatchObject({ code, status, message: "nope" });
  });

  it("429 reads retry-after; without it there is no retryAfterSeconds", () => {
    expect(toProviderError(apiError(429, "slow down", { "retry-after": "12" }), context()).retryAfterSeconds).toBe(12);
    expect(toProviderError(apiError(429, "slow down"), context()).retryAfterSeconds).toBeUndefined();
  });

  it("masks the key in the provider's message", () => {
    const error = toProviderError(apiError(401, "Incorrect API key provided: sk-the-real-key-123."), context());
    expect(error.message).toBe("Incorrect API key provided: ***.");
  });

  it("masks the turn's registered secrets and patterns too", () => {
    const redaction = { secrets: ["sk-the-real-key-123", "gateway-token-0123456789"], patterns: [/ACME-\d{6}/g] };
    const error = toProviderError(apiError(400, "bad: gateway-token-0123456789 ACME-123456 sk-the-real-key-123"), context({ redaction }));
    expect(error.message).toBe("bad: *** *** ***");
  });

  // A provider 400 with a 100,000-character message was returned whole.
  it("bounds the provider's message, with a marker saying how much was left out", () => {
    const error = toProviderError(apiError(400, "x".repeat(100_000)), context());
    expect(error).toMatchObject({ code: "provider_error", status: 400 });
    expect(error.message).toBe(`${"x".repeat(MAX_PROVIDER_MESSAGE_CHARS)}…[${100_000 - MAX_PROVIDER_MESSAGE_CHARS} more characters]`);
    const streamed = toProviderError({ message: "y".repeat(5000) }, context({ status: 200 }));
    expect(streamed.message.length).toBeLessThan(MAX_PROVIDER_MESSAGE_CHARS + 40);
    expect(streamed.message).toMatch(/…\[\d+ more characters\]$/);
  });

  it("no HTTP answer (network error) is provider_unavailable with status 0", () => {
    expect(toProviderError(apiError(undefined, "Cannot connect to API: refused"), context())).toMatchObject({
      code: "provider_unavailable",
      status: 0,
    });
  });

  it("the call's own ending wins over the error it surfaced as", () => {
    const abortError = new DOMException("aborted", "AbortError");
    expect(toProviderError(abortError, context({ ended: "aborted" }))).toMatchObject({ code: "aborted", status: 0 });
    expect(toProviderError(apiError(500, "x"), context({ ended: "timeout" }))).toMatchObject({
      code: "provider_timeout",
      status: 0,
      message: "the provider did not finish answering within 5000 ms",
    });
  });

  it("an error event inside the stream is provider_unavailable unless it carries a status", () => {
    expect(toProviderError({ message: "Overloaded" }, context({ status: 200 }))).toMatchObject({ code: "provider_unavailable", status: 200 });
    expect(toProviderError({ message: "rate limited", statusCode: 429 }, context())).toMatchObject({ code: "provider_rate_limited", status: 429 });
  });

  it("a broken stream is provider_unavailable; a request that could not be built is provider_error (status 0)", () => {
    expect(toProviderError(new SyntaxError("Unexpected end of JSON"), context({ status: 200 }))).toMatchObject({
      code: "provider_unavailable",
      status: 200,
      message: 'the response of provider "acme" (HTTP 200) broke off or could not be read',
    });
    expect(toProviderError(new Error("Multiple system messages"), context({ sent: false }))).toMatchObject({
      code: "provider_error",
      status: 0,
      message: "the request could not be built: Multiple system messages",
    });
  });

  // A malformed chunk's raw JSON and the AI SDK's validation dump were echoed in error.message.
  describe("an answer that could not be read is described by the error's class, never quoted", () => {
    const RAW = '{"choices":[{"index":"zero","delta":{"content":12345}}],"raw":"RAW-PROVIDER-BYTES"}';
    it.each([
      [
        "JSONParseError",
        new JSONParseError({ text: RAW.slice(0, 40), cause: new SyntaxError("Unexpected end of JSON input") }),
        "an event was not valid JSON",
      ],
      [
        "TypeValidationError",
        new TypeValidationError({ value: JSON.parse(RAW), cause: new Error(`[{"path":["choices",0],"message":"${RAW}"}]`) }),
        "an event did not match the wire format",
      ],
      [
        "InvalidResponseDataError",
        new InvalidResponseDataError({ data: JSON.parse(RAW), message: `Expected 'id' to be a string: ${RAW}` }),
        "an event held data the wire format does not allow",
      ],
      ["EmptyResponseBodyError", new EmptyResponseBodyError({}), "the answer had no body"],
    ] as const)("%s → %s", (_name, error, why) => {
      const out = toProviderError(error, context({ status: 200 }));
      expect(out).toMatchObject({
        code: "provider_unavailable",
        status: 200,
        message: `provider "acme" (HTTP 200) sent a malformed response: ${why}`,
      });
      expect(out.message).not.toContain("RAW-PROVIDER-BYTES");
    });

    it("a 2xx the wire client failed to process says so by its cause; without a status there is no HTTP part", () => {
      const failed = new APICallError({
        message: "Failed to process successful response",
        url: "https://x.example/v1/messages",
        requestBodyValues: {},
        statusCode: 200,
        cause: new JSONParseError({ text: RAW, cause: new SyntaxError("x") }),
      });
      expect(toProviderError(failed, context())).toMatchObject({
        code: "provider_unavailable",
        status: 200,
        message: 'provider "acme" (HTTP 200) sent a malformed response: an event was not valid JSON',
      });
      expect(toProviderError(new TypeError(RAW), context()).message).toBe('the response of provider "acme" broke off or could not be read');
    });

    it("an error event the provider sent on purpose keeps its (bounded, redacted) words", () => {
      expect(toProviderError({ message: "Overloaded sk-the-real-key-123" }, context({ status: 200 })).message).toBe(
        "the provider's stream reported an error: Overloaded ***",
      );
    });
  });

  it("a ProviderError passes through unchanged", () => {
    const error = new ProviderError("provider_error", "x", 418);
    expect(toProviderError(error, context({ ended: "aborted" }))).toBe(error);
  });
});
