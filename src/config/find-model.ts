import type { GatewayConfig, ModelCompat, ModelCost, ProviderCatalog } from "./gateway-config";

/** A model resolved from the merged provider catalogs. */
export type CatalogModel = {
  provider: string;
  id: string;
  compat?: ModelCompat;
  cost?: ModelCost;
  upstreamModel?: string;
  contextWindow?: number;
  maxTokens?: number;
};

/**
 * Splits `"provider/model"` at the first `/`: the provider id never contains one, the model id may
 * (`"novita/moonshotai/kimi-k3"` → provider `novita`, id `moonshotai/kimi-k3`).
 */
export function splitModelRef(model: string): { provider: string; id: string } | undefined {
  const slash = model.indexOf("/");
  if (slash <= 0 || slash === model.length - 1) return undefined;
  return { provider: model.slice(0, slash), id: model.slice(slash + 1) };
}

/** A provider catalog by id (bundled merged with user), or undefined. */
export function findProvider(config: GatewayConfig, providerId: string): ProviderCatalog | undefined {
  return Object.hasOwn(config.providers, providerId) ? config.providers[providerId] : undefined;
}

/** Looks up `"provider/model"` (exact, case-sensitive id) in the merged catalogs. */
export function findModel(config: GatewayConfig, model: string): CatalogModel | undefined {
  const ref = splitModelRef(model);
  if (ref === undefined) return undefined;
  const row = findProvider(config, ref.provider)?.models.find((candidate) => candidate.id === ref.id);
  if (row === undefined) return undefined;
  return { ...row, provider: ref.provider };
}
