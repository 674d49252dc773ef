import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import worker from "../../src/index";

// The per-tenant limit (5 requests a minute in this project, vitest.config.ts) seen through the
// facades by the official SDKs: each raises its own RateLimitError with the Retry-After header.
// Each SDK gets a tenant of its own (the shipped Worker with its own GATEWAY_TOKENS), so this
// file's counts never meet the other file's.

const LIMIT = 5;

function through(token: string, tenant: string): typeof fetch {
  const bindings = { ...env, GATEWAY_TOKENS: JSON.stringify({ [token]: tenant }) };
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const ctx = createExecutionContext();
    const res = await worker.fetch!(new Request(input as any, init) as any, bindings as any, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  }) as typeof fetch;
}

/** Requests until the first refusal: two windows' worth plus one, so a window rollover cannot hide it. */
async function untilRefused(send: () => Promise<unknown>): Promise<any> {
  for (let i = 0; i < 2 * LIMIT + 1; i++) {
    const failure = await send().then(
      () => undefined,
      (e) => e,
    );
    if (failure?.status === 429) return failure;
  }
  throw new Error("never rate limited");
}

describe("the tenant rate limit through the facades", () => {
  it("the openai client raises RateLimitError with Retry-After and the OpenAI error envelope", async () => {
    const token = "test-token-fx-openai";
    const client = new OpenAI({ baseURL: "http://gateway/v1", apiKey: token, fetch: through(token, "tenant-fx-openai"), maxRetries: 0 });
    const limited = await untilRefused(() => client.models.list());
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(limited.error).toMatchObject({
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      message: expect.stringMatching(/retry after 60 s/),
    });
    // A completion of the same tenant is refused the same way, before any model is called.
    const completion = await client.chat.completions.create({ model: "nope/none", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(completion).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it("the Anthropic client raises RateLimitError with Retry-After and the Anthropic error envelope", async () => {
    const token = "test-token-fx-anthropic";
    const client = new Anthropic({ baseURL: "http://gateway", apiKey: token, fetch: through(token, "tenant-fx-anthropic"), maxRetries: 0 });
    // Unknown model: each request is authenticated, counted and refused (404) until the limit refuses it first.
    const limited = await untilRefused(() =>
      client.messages.create({ model: "nope/none", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(limited.error).toMatchObject({ type: "error", error: { type: "rate_limit_error", message: expect.stringMatching(/\(rate_limited\)$/) } });
  });
});
