import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http";

// This project's RATE_LIMITER allows 5 requests per tenant per 60 s window (vitest.config.ts).
const LIMIT = 5;

async function call(path: string, token: string | null, method = "DELETE") {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await SELF.fetch(`http://gateway${path}`, { method, headers });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), json: (await res.json()) as any };
}

/** Requests until the first 429: at most two windows' worth plus one, so a window rollover mid-loop cannot hide it. */
async function untilLimited(token: string) {
  for (let i = 0; i < 2 * LIMIT + 1; i++) {
    const r = await call(`/v1/sessions/rl-${i}`, token);
    if (r.status === 429) return r;
    expect(r.status).toBe(404); // an unknown session: the request went through
  }
  throw new Error("never rate limited");
}

describe("per-tenant request rate limit (RATE_LIMITER binding)", () => {
  it("over the limit a tenant gets 429 rate_limited with Retry-After; other tenants and /healthz are not limited", async () => {
    const limited = await untilLimited("test-token-a");
    expect(limited.retryAfter).toBe("60");
    expect(limited.json).toEqual({
      error: { code: "rate_limited", message: expect.stringMatching(/too many requests for this tenant; retry after 60 s/) },
    });
    // POST /mcp is limited per tenant like /v1 (the same middleware and key).
    const mcp = await call("/mcp", "test-token-a", "POST");
    expect(mcp.status).toBe(429);
    expect(mcp.json.error.code).toBe("rate_limited");
    expect((await call("/v1/sessions/rl-other", "test-token-b")).status).toBe(404);
    for (let i = 0; i < 2 * LIMIT; i++) expect((await call("/healthz", null, "GET")).status).toBe(200);
  });

  it("an embedding without the binding, or with gateway.rateLimit.enabled false, is unlimited", async () => {
    const app = createApp();
    const send = async (bindings: Record<string, unknown>) => {
      const ctx = createExecutionContext();
      const req = new Request("http://gateway/v1/sessions/rl-unbound", { method: "DELETE", headers: { authorization: "Bearer test-token-b" } });
      const res = await app.fetch(req, { ...env, ...bindings } as any, ctx);
      await waitOnExecutionContext(ctx);
      return res.status;
    };
    const disabled = JSON.stringify({ tools: { codeMode: true }, gateway: { rateLimit: { enabled: false } } });
    for (let i = 0; i < 2 * LIMIT + 1; i++) {
      expect(await send({ RATE_LIMITER: undefined })).toBe(404);
      expect(await send({ CODEMODE_CONFIG: disabled })).toBe(404);
    }
    // The same app with the binding does limit tenant-b (control: the loop above is not vacuous).
    const statuses: number[] = [];
    for (let i = 0; i < 2 * LIMIT + 1; i++) statuses.push(await send({}));
    expect(statuses).toContain(429);
  });
});
