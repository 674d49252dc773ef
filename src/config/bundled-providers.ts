import type { ModelRow, ProviderCatalog } from "./gateway-config";

/**
 * Provider catalogs shipped with the gateway (seed 002, "Shipped preferred models" and
 * "Models shipped by more than one provider"). They sit UNDER the user's `models.providers`:
 * a user row with the same provider and id replaces the bundled row.
 *
 * Only `openai` and `anthropic` carry connection defaults; for every other provider the user adds
 * `api`, `baseUrl` and `apiKey` under the same provider id (they merge with these rows).
 */

const preferred = (id: string, extra: Partial<ModelRow> = {}): ModelRow =>
  Object.freeze({ id, compat: Object.freeze({ codeMode: "preferred", supportsTools: true }), ...extra });

/**
 * Resellers and aggregators declare `"capable"` explicitly for models that first-party catalogs flag
 * `"preferred"`: the preferred tier came from evaluations on first-party endpoints and has not been
 * repeated per reseller. Promoting a row here is a deliberate, evidence-backed change.
 */
const capable = (id: string): ModelRow => Object.freeze({ id, compat: Object.freeze({ codeMode: "capable", supportsTools: true }) });

const catalog = (models: ModelRow[], connection: Omit<ProviderCatalog, "models"> = {}): ProviderCatalog =>
  Object.freeze({ ...connection, models: Object.freeze(models) as ModelRow[] });

/** First-party catalogs: every row here is flagged `"preferred"` (the seed's table, verbatim). */
export const FIRST_PARTY_PROVIDERS: Readonly<Record<string, ProviderCatalog>> = Object.freeze({
  anthropic: catalog(
    ["claude-fable-5", "claude-opus-5", "claude-sonnet-5", "claude-mythos-5", "claude-opus-4-8", "claude-haiku-4-5"].map((id) => preferred(id)),
    { api: "anthropic-messages", baseUrl: "https://api.anthropic.com/v1", apiKey: "env:ANTHROPIC_API_KEY" },
  ),
  deepseek: catalog(["deepseek-v4-pro", "deepseek-v4-flash"].map((id) => preferred(id))),
  google: catalog(
    [
      "gemini-3-flash-preview",
      "gemini-3.1-pro-preview",
      "gemini-3.1-flash-lite",
      "gemini-3.5-flash",
      "gemini-3.5-flash-lite",
      "gemini-3.6-flash",
      "gemini-3.7-flash",
    ].map((id) => preferred(id)),
  ),
  // Kimi's subscription endpoint serves Moonshot's weights under different names: `upstreamModel` groups
  // these rows with `moonshot/kimi-k3`.
  kimi: catalog([preferred("k3", { upstreamModel: "kimi-k3" }), preferred("k3-256k", { upstreamModel: "kimi-k3" })]),
  minimax: catalog([preferred("MiniMax-M3")]),
  moonshot: catalog([preferred("kimi-k3")]),
  openai: catalog(
    ["gpt-5.6", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5", "gpt-5.5-pro"].map((id) => preferred(id)),
    { api: "openai-completions", baseUrl: "https://api.openai.com/v1", apiKey: "env:OPENAI_API_KEY" },
  ),
  xiaomi: catalog([preferred("mimo-v2.5")]),
  zai: catalog(["glm-5.3", "glm-5.2", "glm-5.1"].map((id) => preferred(id))),
});

/**
 * Reseller and aggregator catalogs. Ids are the resellers' own (namespaced, differently cased); they group
 * with the first-party rows by `modelFamilyKey` without any `upstreamModel` marker.
 */
export const RESELLER_PROVIDERS: Readonly<Record<string, ProviderCatalog>> = Object.freeze({
  baseten: catalog(["deepseek-ai/DeepSeek-V4-Pro", "moonshotai/Kimi-K3", "zai-org/GLM-5.2"].map(capable)),
  deepinfra: catalog(["deepseek-ai/DeepSeek-V4-Pro", "moonshotai/Kimi-K3", "zai-org/GLM-5.2"].map(capable)),
  "github-copilot": catalog(["gpt-5.6", "gpt-5.5", "claude-sonnet-5", "claude-opus-5", "gemini-3.1-pro-preview"].map(capable)),
  gmi: catalog(["deepseek-ai/DeepSeek-V4-Pro", "moonshotai/Kimi-K3"].map(capable)),
  novita: catalog(["moonshotai/kimi-k3", "deepseek/deepseek-v4-pro", "zai-org/glm-5.2", "minimaxai/minimax-m3"].map(capable)),
  nvidia: catalog(["z-ai/glm-5.2", "moonshotai/kimi-k3", "deepseek-ai/deepseek-v4-pro"].map(capable)),
  "ollama-cloud": catalog(["kimi-k3", "glm-5.2", "deepseek-v4-pro"].map(capable)),
  opencode: catalog(["claude-sonnet-5", "gpt-5.6", "kimi-k3", "glm-5.2"].map(capable)),
  "opencode-go": catalog(["kimi-k3", "glm-5.2", "deepseek-v4-flash"].map(capable)),
  qianfan: catalog(["deepseek-v4-pro", "deepseek-v4-flash", "kimi-k3"].map(capable)),
  together: catalog(["deepseek-ai/DeepSeek-V4-Pro", "moonshotai/Kimi-K3", "zai-org/GLM-5.2"].map(capable)),
  venice: catalog(["deepseek-v4-pro", "kimi-k3", "glm-5.2"].map(capable)),
  "volcengine-plan": catalog(["deepseek-v4-pro", "kimi-k3", "glm-5.2"].map(capable)),
});

/** Every bundled catalog; `parseGatewayConfig` merges the user's `models.providers` over this. */
export const BUNDLED_PROVIDERS: Readonly<Record<string, ProviderCatalog>> = Object.freeze({
  ...FIRST_PARTY_PROVIDERS,
  ...RESELLER_PROVIDERS,
});
