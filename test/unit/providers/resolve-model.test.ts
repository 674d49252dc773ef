import { describe, expect, it } from "vitest";
import { parseGatewayConfig, type GatewayConfig } from "../../../src/config";
import { DEFAULT_CONTEXT_WINDOW, resolveModel } from "../../../src/providers";

function config(providers: unknown): GatewayConfig {
  const result = parseGatewayConfig({ models: { providers } });
  if (!result.ok) throw new Error(result.error.message);
  return result.config;
}

const PROXY = {
  proxy: {
    api: "openai-completions",
    baseUrl: "https://llm.example.com/v1",
    apiKey: "env:PROXY_KEY",
    models: [
      { id: "big", cost: { input: 1, output: 4 }, contextWindow: 200_000, maxTokens: 32_000 },
      { id: "alias", upstreamModel: "vendor-weights-7" },
    ],
  },
};
const ENV = { PROXY_KEY: "sk-proxy-secret-value", OTHER: "x" };

describe("resolveModel", () => {
  it("resolves a row with its connection, secret, prices and token limits", () => {
    expect(resolveModel(config(PROXY), "proxy/big", ENV)).toEqual({
      ok: true,
      model: {
        ref: "proxy/big",
        provider: "proxy",
        id: "big",
        wireModel: "big",
        api: "openai-completions",
        baseUrl: "https://llm.example.com/v1",
        apiKey: "sk-proxy-secret-value",
        cost: { input: 1, output: 4 },
        contextWindow: 200_000,
        maxOutputTokens: 32_000,
      },
    });
  });

  it("sends upstreamModel on the wire; a row without contextWindow gets the default, and no cost or max", () => {
    const result = resolveModel(config(PROXY), "proxy/alias", ENV);
    expect(result).toMatchObject({ ok: true, model: { id: "alias", wireModel: "vendor-weights-7", contextWindow: DEFAULT_CONTEXT_WINDOW } });
    expect(DEFAULT_CONTEXT_WINDOW).toBe(128_000);
    if (!result.ok) throw new Error("unreachable");
    expect(result.model).not.toHaveProperty("cost");
    expect(result.model).not.toHaveProperty("maxOutputTokens");
  });

  it("a bundled first-party model resolves with its bundled connection once the secret is bound", () => {
    const result = resolveModel(config(undefined), "anthropic/claude-opus-5", { ANTHROPIC_API_KEY: "k" });
    expect(result).toMatchObject({ ok: true, model: { api: "anthropic-messages", baseUrl: "https://api.anthropic.com/v1", apiKey: "k" } });
  });

  it.each([
    ["proxy/nope", 'unknown model "proxy/nope": provider "proxy" lists no model "nope"'],
    ["nowhere/big", 'unknown model "nowhere/big": no provider "nowhere" in models.providers'],
    ["big", 'model "big" must be written "provider/model"'],
  ])("refuses %s, naming it", (ref, message) => {
    expect(resolveModel(config(PROXY), ref, ENV)).toEqual({ ok: false, message, path: "model" });
  });

  it("a provider without baseUrl names the missing key", () => {
    const cfg = config({ bare: { api: "anthropic-messages", apiKey: "env:BARE_KEY", models: [{ id: "m" }] } });
    expect(resolveModel(cfg, "bare/m", { BARE_KEY: "k" })).toEqual({
      ok: false,
      message: 'models.providers.bare.baseUrl is not set: model "bare/m" cannot be called without it',
      path: "models.providers.bare.baseUrl",
    });
  });

  it("a bundled provider without a connection names api first; a quoted provider id keeps its quotes", () => {
    expect(resolveModel(config(undefined), "deepseek/deepseek-v4-pro", {})).toMatchObject({ ok: false, path: "models.providers.deepseek.api" });
    const cfg = config({ "my.proxy": { api: "openai-completions", baseUrl: "https://x.example/v1", models: [{ id: "m" }] } });
    expect(resolveModel(cfg, "my.proxy/m", {})).toMatchObject({ ok: false, path: 'models.providers["my.proxy"].apiKey' });
  });

  it("a secret that is not bound (or empty) is named, and no value is echoed", () => {
    for (const env of [{ OTHER: "sk-other-secret-value" }, { PROXY_KEY: "" }, { PROXY_KEY: 42 }]) {
      const result = resolveModel(config(PROXY), "proxy/big", env);
      expect(result).toEqual({
        ok: false,
        message: 'the Worker secret PROXY_KEY (models.providers.proxy.apiKey) is not set: model "proxy/big" cannot be called',
        path: "models.providers.proxy.apiKey",
      });
    }
  });

  it("reads only the environment's own keys (no prototype lookups)", () => {
    const cfg = config({ p: { api: "openai-completions", baseUrl: "https://x.example/v1", apiKey: "env:toString", models: [{ id: "m" }] } });
    expect(resolveModel(cfg, "p/m", {})).toMatchObject({ ok: false, path: "models.providers.p.apiKey" });
  });
});
