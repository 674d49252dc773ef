import { configPath, findProvider, splitModelRef, type GatewayConfig, type ProviderCatalog } from "../config";
import type { ResolvedModel } from "./types";

/** Context window assumed for a catalog row that does not state `contextWindow`. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

export type ResolveModelResult = { ok: true; model: ResolvedModel } | { ok: false; message: string; path: string };

const CONNECTION_KEYS = ["api", "baseUrl", "apiKey"] as const satisfies readonly (keyof ProviderCatalog)[];

/**
 * Resolves `"provider/model"` against the merged provider catalogs and reads the provider's secret
 * from the Worker environment. Refusals name what is missing: the unknown model (path `"model"`,
 * the chat body's field), the provider key that is not set (`models.providers.<p>.<key>`), or the
 * secret that is not bound (by name; a value is never echoed).
 */
export function resolveModel(config: GatewayConfig, ref: string, env: Readonly<Record<string, unknown>>): ResolveModelResult {
  const split = splitModelRef(ref);
  if (split === undefined) return { ok: false, message: `model ${JSON.stringify(ref)} must be written "provider/model"`, path: "model" };
  const provider = findProvider(config, split.provider);
  if (provider === undefined) {
    return {
      ok: false,
      message: `unknown model ${JSON.stringify(ref)}: no provider ${JSON.stringify(split.provider)} in models.providers`,
      path: "model",
    };
  }
  const row = provider.models.find((candidate) => candidate.id === split.id);
  if (row === undefined) {
    return {
      ok: false,
      message: `unknown model ${JSON.stringify(ref)}: provider ${JSON.stringify(split.provider)} lists no model ${JSON.stringify(split.id)}`,
      path: "model",
    };
  }

  const providerPath = configPath("models.providers", split.provider);
  for (const key of CONNECTION_KEYS) {
    if (provider[key] !== undefined) continue;
    const path = configPath(providerPath, key);
    return { ok: false, message: `${path} is not set: model ${JSON.stringify(ref)} cannot be called without it`, path };
  }
  const { api, baseUrl, apiKey: secretRef } = provider as Required<Omit<ProviderCatalog, "models">>;

  // Config validation guarantees "env:<NAME>"; the name, never the value, may appear in messages.
  const secretName = secretRef.slice("env:".length);
  const secret = Object.hasOwn(env, secretName) ? env[secretName] : undefined;
  if (typeof secret !== "string" || secret === "") {
    return {
      ok: false,
      message: `the Worker secret ${secretName} (${configPath(providerPath, "apiKey")}) is not set: model ${JSON.stringify(ref)} cannot be called`,
      path: configPath(providerPath, "apiKey"),
    };
  }

  const model: ResolvedModel = {
    ref,
    provider: split.provider,
    id: row.id,
    wireModel: row.upstreamModel ?? row.id,
    api,
    baseUrl,
    apiKey: secret,
    contextWindow: row.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
  };
  if (row.cost !== undefined) model.cost = row.cost;
  if (row.maxTokens !== undefined) model.maxOutputTokens = row.maxTokens;
  return { ok: true, model };
}
