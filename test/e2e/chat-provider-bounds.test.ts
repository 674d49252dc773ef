import { describe, expect, it } from "vitest";
import { MAX_TOKEN_COUNT } from "../../src/limits";
import { api, sessionId } from "./helpers";
import { chat, parseSse, script } from "./chat-helpers";

/**
 * Values a model provider controls, through POST /v1/sessions/:sid/chat against the fake provider
 * server: each is bounded before it reaches the client (a hostile tester's findings, pinned).
 */

const MODELS = ["fakeoai/gpt-fake", "fakeant/claude-fake"] as const;
/** In every malformed event the fake server sends (MALFORMED_MARKER, test/support/fake-provider/answers.mjs). */
const MALFORMED_MARKER = "RAW-PROVIDER-BYTES";
const ask = (marker: string) => [{ role: "user", content: `${marker} hi` }];

describe.each(MODELS)("/chat with %s: usage a provider reports", (model) => {
  it("negative counts are unknown (0) and the cost is never negative", async () => {
    const s = await script([{ text: "ok", usage: { input: -5_000_000, output: -1 } }]);
    const r = await chat(sessionId(), { model, messages: ask(s.marker) });
    expect(r.status).toBe(200);
    // Was: costUsd -10.000008 and inputTokens -5000000.
    expect(r.json.meta.usage).toEqual({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(r.json.meta.costUsd).toBe(0);
  });

  it("a count of 1e308 is clamped, and the cost stays a finite number", async () => {
    const session = sessionId();
    const s = await script([{ text: "ok", usage: { input: 1e308, output: 1e308 } }]);
    const r = await chat(session, { model, messages: ask(s.marker) });
    expect(r.status).toBe(200);
    // Was: inputTokens and costUsd `null` in the JSON (Infinity).
    expect(r.json.meta.usage).toMatchObject({ inputTokens: MAX_TOKEN_COUNT, outputTokens: MAX_TOKEN_COUNT });
    expect(Number.isFinite(r.json.meta.costUsd)).toBe(true);
    expect(r.json.meta.costUsd).toBeGreaterThan(0);
    const t = await api("GET", `/v1/sessions/${session}/turns/${r.json.turnId}/trajectory`);
    expect(t.json.meta.usage).toMatchObject({ inputTokens: MAX_TOKEN_COUNT, outputTokens: MAX_TOKEN_COUNT });
    expect(Number.isFinite(t.json.meta.costUsd)).toBe(true);
  });
});

describe("/chat: a provider's Retry-After", () => {
  const limited = async (model: string, retryAfter: string) => {
    const s = await script([{ error: { status: 429, message: "slow down", headers: { "retry-after": retryAfter } } }]);
    return chat(sessionId(), { model, messages: ask(s.marker) });
  };

  it.each([
    ["fakeoai/gpt-fake", "99999999999999999999"],
    ["fakeant/claude-fake", "Thu, 31 Dec 2099 23:59:59 GMT"],
  ])("%s: %j is clamped to one day in the header and the body", async (model, retryAfter) => {
    const r = await limited(model, retryAfter);
    expect(r.status).toBe(429);
    // Was: `retry-after: 100000000000000000000` / 2300176146 s.
    expect(r.headers.get("retry-after")).toBe("86400");
    expect(r.json.error).toMatchObject({ code: "provider_rate_limited", providerStatus: 429, retryAfterSeconds: 86_400 });
  });

  it("a value that is not delay-seconds or a date is dropped, not passed on", async () => {
    const r = await limited("fakeoai/gpt-fake", "-1.5");
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBeNull();
    expect(r.json.error.code).toBe("provider_rate_limited");
    expect(r.json.error).not.toHaveProperty("retryAfterSeconds");
  });
});

describe("/chat: a provider's error message", () => {
  it("a 50,000-character message is cut to 1,000 characters with a marker", async () => {
    const s = await script([{ error: { status: 400, message: "A".repeat(50_000) } }]);
    const r = await chat(sessionId(), { model: "fakeoai/gpt-fake", messages: ask(s.marker) });
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: "provider_error", providerStatus: 400 });
    // Was: the whole 50 KB message.
    expect(r.json.error.message).toBe(`${"A".repeat(1_000)}…[49000 more characters]`);
    expect(r.text.length).toBeLessThan(3_000);
  });

  it("an error answer past 64 KiB is read only that far: its status still decides, its text is not shown", async () => {
    const s = await script([{ error: { status: 400, message: "B".repeat(500_000) } }]);
    const r = await chat(sessionId(), { model: "fakeoai/gpt-fake", messages: ask(s.marker) });
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: "provider_error", providerStatus: 400 });
    expect(r.json.error.message).not.toContain("BBBB");
    expect(r.text.length).toBeLessThan(3_000);
  });

  it("is redacted like other echoed text: registered secrets (another provider's key, gateway tokens) and token shapes", async () => {
    const s = await script([
      { error: { status: 400, message: "bad request from test-token-b with fake-key-anthropic and sk-proj-AbCdEf0123456789xyz" } },
    ]);
    // The event stream carries the same error as the JSON answer.
    const r = await chat(sessionId(), { model: "fakeoai/gpt-fake", messages: ask(s.marker) }, { accept: "text/event-stream" });
    expect(r.status).toBe(200);
    const error = parseSse(r.text).find((e) => e.event === "error");
    expect(error?.data.error).toMatchObject({ code: "provider_error", providerStatus: 400, message: "bad request from *** with *** and ***" });
  });
});

describe.each(MODELS)("/chat with %s: a malformed stream", (model) => {
  const provider = model.split("/")[0]!;
  it.each([
    [true, "an event was not valid JSON"],
    ["shape", "an event did not match the wire format"],
  ] as const)("malformed: %s → provider_unavailable naming the provider and status, no raw bytes", async (kind, why) => {
    const s = await script([{ malformed: kind, text: "before the break" }]);
    const r = await chat(sessionId(), { model, messages: ask(s.marker) });
    expect(r.status).toBe(502);
    // Was: the raw chunk (and for "shape" the AI SDK's validation dump) inside error.message.
    expect(r.json.error).toEqual({
      code: "provider_unavailable",
      message: `provider "${provider}" (HTTP 200) sent a malformed response: ${why}`,
      providerStatus: 200,
    });
    expect(r.text).not.toContain(MALFORMED_MARKER);
    expect(r.text).not.toContain("Type validation");
  });
});
