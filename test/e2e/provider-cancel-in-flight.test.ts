import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../../src/config";
import { createModelClient, ProviderError, resolveModel, type ModelEvent } from "../../src/providers";
import { fakeScript } from "../support/fake-provider-client";

// A caller that goes away as soon as its model request reached the provider (before any answer
// byte was read): the call ends `aborted` at once and the provider sees its client go away,
// instead of the stall running its course.

const config = (() => {
  const result = loadGatewayConfig(env as { CODEMODE_CONFIG?: string });
  if (!result.ok) throw new Error(`test config refused: ${result.error.message}`);
  return result.config;
})();

describe.each(["fakeoai/gpt-fake", "fakeant/claude-fake"])("%s", (ref) => {
  it("the caller's signal fired once the request is in flight ends the call aborted, and the provider sees the client go away", async () => {
    const script = await fakeScript([{ hangMs: 60_000 }]);
    const resolved = resolveModel(config, ref, env as Record<string, unknown>);
    if (!resolved.ok) throw new Error(resolved.message);
    const caller = new AbortController();
    const events: ModelEvent[] = [];
    const ended = (async () => {
      const stream = createModelClient(resolved.model, { timeoutMs: 120_000 }).stream({
        messages: [{ role: "user", content: `${script.marker} hello` }],
        tools: [],
        signal: caller.signal,
      });
      for await (const event of stream) events.push(event);
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    for (let i = 0; i < 400 && (await script.arrived()) < 1; i++) await new Promise((r) => setTimeout(r, 25));
    caller.abort();
    const error = await ended;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "aborted" });
    expect(events).toEqual([]);
    const [request] = await script.requests();
    expect(request!.aborted).toBe(true);
  });
});
