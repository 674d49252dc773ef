import { describe, expect, it } from "vitest";
import { parseGatewayConfig, resolveModelAlias } from "../../../src/config";

// `models.aliases`: names a facade client may send as `model`, checked against the merged catalogs at load.

const provider = { api: "openai-completions", baseUrl: "https://llm.example/v1", apiKey: "env:K", models: [{ id: "m1" }] };
const parse = (aliases: unknown) => parseGatewayConfig({ models: { providers: { acme: provider }, aliases } });

describe("models.aliases", () => {
  it("maps an alias to the provider/model it names; other names pass through", () => {
    const r = parse({ fast: "acme/m1" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(resolveModelAlias(r.config, "fast")).toBe("acme/m1");
    expect(resolveModelAlias(r.config, "acme/m1")).toBe("acme/m1");
    // No prototype: a name like constructor is not an alias.
    expect(resolveModelAlias(r.config, "constructor")).toBe("constructor");
  });

  it("refuses a target the catalogs do not list, a non-string target and an alias shadowing a catalog model, naming the key", () => {
    expect(parse({ fast: "acme/nope" })).toMatchObject({ ok: false, error: { path: "models.aliases.fast" } });
    expect(parse({ fast: 3 })).toMatchObject({ ok: false, error: { path: "models.aliases.fast" } });
    expect(parse({ "acme/m1": "acme/m1" })).toMatchObject({ ok: false, error: { message: expect.stringMatching(/shadows the catalog model/) } });
    expect(parse(["acme/m1"])).toMatchObject({ ok: false, error: { path: "models.aliases" } });
  });

  it("may name a bundled catalog's model", () => {
    expect(parseGatewayConfig({ models: { aliases: { gpt: "openai/gpt-5.5" } } }).ok).toBe(true);
  });
});
