import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionId } from "../e2e/helpers";
import worker from "./entry";

/** Configuration errors are reported on /healthz and on every /v1 request, naming the rule. */
const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

async function health(overrides: Record<string, unknown>) {
  const res = await worker.fetch(new Request("http://gateway/healthz"), { ...(env as any), ...overrides }, ctx);
  return { status: res.status, json: (await res.json()) as any };
}

async function openTurn(overrides: Record<string, unknown>, token = "test-token-a") {
  const res = await worker.fetch(
    new Request(`http://gateway/v1/sessions/${sessionId()}/turns`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: "{}" }),
    { ...(env as any), ...overrides },
    ctx,
  );
  return { status: res.status, json: (await res.json()) as any };
}

describe("invalid GATEWAY_TOKENS is a configuration error, not ok on /healthz", () => {
  it.each([
    [JSON.stringify({ short: "tenant-a" }), "invalid GATEWAY_TOKENS: entry 1: tokens must be at least 8 characters"],
    [
      JSON.stringify({ "good-token-1": "tenant-a", "has a space": "tenant-b" }),
      "invalid GATEWAY_TOKENS: entry 2: tokens cannot contain whitespace (a bearer header cannot carry it)",
    ],
    [JSON.stringify({ "good-token-1": "" }), "invalid GATEWAY_TOKENS: entry 1: the tenant id must be a non-empty string"],
    [JSON.stringify({ "good-token-1": 7 }), "invalid GATEWAY_TOKENS: entry 1: the tenant id must be a non-empty string"],
    [JSON.stringify(["good-token-1"]), "invalid GATEWAY_TOKENS: must be a JSON object mapping token to tenant id"],
    ["{nope", "invalid GATEWAY_TOKENS: not valid JSON"],
  ])("GATEWAY_TOKENS=%s is refused on /healthz and on /v1 with the rule", async (tokens, message) => {
    const h = await health({ GATEWAY_TOKENS: tokens });
    expect(h.status).toBe(500);
    expect(h.json).toEqual({ error: { code: "invalid_config", message, path: "GATEWAY_TOKENS" } });
    const v1 = await openTurn({ GATEWAY_TOKENS: tokens });
    expect(v1.status).toBe(500);
    expect(v1.json).toEqual({ error: { code: "invalid_config", message, path: "GATEWAY_TOKENS" } });
  });

  it("the message never quotes a token or a tenant id", async () => {
    const h = await health({ GATEWAY_TOKENS: JSON.stringify({ "sekrit-token-value": "tenant-a", abc: "tenant-zeta-private" }) });
    expect(h.status).toBe(500);
    expect(JSON.stringify(h.json)).not.toMatch(/sekrit|abc|tenant-zeta|tenant-a/);
  });

  it("valid tokens keep /healthz ok and authenticate; an unset secret is ok on /healthz and 401 on /v1", async () => {
    expect((await health({})).json).toMatchObject({ ok: true, runtime: "quickjs-wasi" });
    expect((await openTurn({})).status).toBe(201);
    expect((await health({ GATEWAY_TOKENS: undefined })).status).toBe(200);
    expect((await openTurn({ GATEWAY_TOKENS: undefined })).status).toBe(401);
  });
});

describe("configuration typos are refused on /healthz and /v1", () => {
  it("a top-level `tool` instead of `tools` is named, instead of code mode silently off", async () => {
    const bad = { CODEMODE_CONFIG: JSON.stringify({ tool: { codeMode: true } }) };
    const expected = {
      error: {
        code: "invalid_config",
        path: "tool",
        message: 'invalid CODEMODE_CONFIG: unknown key "tool" at $.tool; known keys here: tools, agents, models, gateway, mcp, logging, approvals',
      },
    };
    const h = await health(bad);
    expect(h.status).toBe(500);
    expect(h.json).toEqual(expected);
    const v1 = await openTurn(bad);
    expect(v1.status).toBe(500);
    expect(v1.json).toEqual(expected);
  });

  it("an unknown key under an agent entry, and an agent id no request can name, are refused", async () => {
    const entry = await health({
      CODEMODE_CONFIG: JSON.stringify({ tools: { codeMode: true }, agents: { entries: { research: { tool: { codeMode: false } } } } }),
    });
    expect(entry.json.error).toMatchObject({ code: "invalid_config", path: "agents.entries.research.tool" });
    const id = await health({ CODEMODE_CONFIG: JSON.stringify({ agents: { entries: { "research!": { tools: { codeMode: false } } } } }) });
    expect(id.json.error).toMatchObject({ code: "invalid_config", path: 'agents.entries["research!"]' });
    expect(id.json.error.message).toContain("is not a valid agent id");
  });

  it("the seed's documented keys keep /healthz ok", async () => {
    const seedLike = {
      tools: { codeMode: "auto", sandbox: { tools: { alsoAllow: ["bundle-mcp"] } }, swarm: false },
      agents: {
        defaults: { models: { "openai/gpt-5.6-luna": { agentRuntime: { id: "openclaw" }, codeMode: true } } },
        entries: { research: { models: { "openai/gpt-5.6-luna": { codeMode: false } } } },
      },
    };
    expect((await health({ CODEMODE_CONFIG: JSON.stringify(seedLike) })).json).toMatchObject({ ok: true });
  });
});
