import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http";
import { handleMcpRequest } from "../../src/mcp-server";

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
    const app = createApp({ mcp: handleMcpRequest });
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

  it("each tools/call of an /mcp JSON-RPC batch counts against the limit; the calls over it are refused alone, as rate_limited", async () => {
    // A tenant of its own (this file's others are spent), through the real app and RATE_LIMITER binding.
    const app = createApp({ mcp: handleMcpRequest });
    const bindings = { ...env, GATEWAY_TOKENS: JSON.stringify({ "test-token-mcp-batch": "tenant-mcp-batch" }) } as any;
    const post = async (body: unknown, headers: Record<string, string> = {}) => {
      const ctx = createExecutionContext();
      const req = new Request("http://gateway/mcp", {
        method: "POST",
        headers: {
          authorization: "Bearer test-token-mcp-batch",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(body),
      });
      const res = await app.fetch(req, bindings, ctx);
      await waitOnExecutionContext(ctx);
      return { status: res.status, sessionId: res.headers.get("mcp-session-id"), json: (await res.json()) as any };
    };
    const clientInfo = { name: "t", version: "1" };
    const init = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo },
    });
    expect(init.status).toBe(200);
    const session = { "mcp-session-id": init.sessionId!, "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
    const CALLS = 12;
    const batch = Array.from({ length: CALLS }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "exec", arguments: { code: `return ${i}` } },
    }));
    // Was: the batch took one unit and all 12 cells ran (100 per request with the SDK's batch cap).
    const r = await post(batch, session);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(CALLS);
    const ran = r.json.filter((m: any) => m.result);
    const refused = r.json.filter((m: any) => m.error);
    expect(ran.length + refused.length).toBe(CALLS);
    // initialize + 12 calls = 13 units; at most two windows' worth (2 × 5) can be allowed around a rollover.
    expect(ran.length).toBeLessThanOrEqual(2 * LIMIT - 1);
    expect(ran[0]).toMatchObject({ id: 1, result: { structuredContent: { status: "completed", value: 0 } } });
    for (const m of refused) {
      expect(m.error).toEqual({
        code: -32600,
        message: expect.stringMatching(/too many requests for this tenant; retry after 60 s/),
        data: { code: "rate_limited", retryAfterSeconds: 60 },
      });
    }
  });
});
