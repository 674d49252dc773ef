import { emptyRecord, fail, isRecord, own, rejectUnknownKeys, unknownKey } from "./config-validation-error";
import { configPath } from "./config-path";
import type { ModelCompat, ModelCost, ModelRow, ProviderApi, ProviderCatalog } from "./gateway-config";
import { modelFamilyKey } from "./model-family-key";

const APIS: readonly ProviderApi[] = ["openai-completions", "anthropic-messages"];
export const COST_KEYS = ["input", "output", "cacheRead", "cacheWrite"] as const;
/** `env:` followed by a secret name without whitespace. */
const SECRET_REF = /^env:\S+$/;
/**
 * Keys of a provider and of a model row. Besides the fields this gateway reads (`contextWindow` and
 * `maxTokens` among them), OpenClaw's own model metadata (`name`, `reasoning`, `input`,
 * `contextTokens`) and provider `headers` are accepted as written so catalogs carry over; anything
 * else (a typo) is refused.
 */
export const PROVIDER_KEYS = ["api", "baseUrl", "apiKey", "models", "headers"];
export const ROW_KEYS = ["id", "compat", "cost", "upstreamModel", "name", "reasoning", "input", "contextWindow", "contextTokens", "maxTokens"];
/** Token counts of a row that the provider layer reads (context sizing, `max_tokens`). */
const TOKEN_COUNT_KEYS = ["contextWindow", "maxTokens"] as const;
/** The compat flags core reads; other compat flags belong to the provider's own transport and pass through. */
export const COMPAT_READ = ["codeMode", "supportsTools"];

/**
 * Validates the user's `models.providers` (at `path`) and merges it over `bundled`:
 * provider-level fields the user sets replace the bundled ones; a user row with the same id as a bundled
 * row replaces it entirely (in place); other user rows are appended. Unknown keys on providers and rows are
 * accepted (they stay in `GatewayConfig.raw`) but not carried into the typed catalog.
 */
export function parseProviderCatalogs(
  value: unknown,
  path: string,
  bundled: Readonly<Record<string, ProviderCatalog>>,
): Record<string, ProviderCatalog> {
  const merged = emptyRecord<ProviderCatalog>();
  for (const [id, catalog] of Object.entries(bundled)) merged[id] = { ...catalog, models: [...catalog.models] };
  if (value === undefined) return merged;
  if (!isRecord(value)) fail(path, "must be an object keyed by provider id");

  for (const providerId of Object.keys(value)) {
    const user = parseProvider(value[providerId], configPath(path, providerId), providerId);
    if (user === undefined) continue;
    const base = Object.hasOwn(merged, providerId) ? merged[providerId] : undefined;
    merged[providerId] = base === undefined ? user : mergeProvider(base, user);
  }
  checkSharedModelTiers(merged);
  return merged;
}

/** Where each user-written row came from (for error paths); bundled rows are not in it. */
const userRowPaths = new WeakMap<ModelRow, string>();

/**
 * Seed 002, "Models shipped by more than one provider": rows describing the same upstream model
 * (grouped by `modelFamilyKey`: namespaced or re-cased ids, `upstreamModel`) must not disagree by
 * accident, so once any sibling states a `compat.codeMode` tier, every sibling states one. A user
 * row that leaves its tier out while a sibling states one is refused, naming the key.
 */
function checkSharedModelTiers(catalogs: Readonly<Record<string, ProviderCatalog>>): void {
  const families = new Map<string, ModelRow[]>();
  for (const catalog of Object.values(catalogs)) {
    for (const row of catalog.models) {
      const key = modelFamilyKey(row);
      const rows = families.get(key);
      if (rows) rows.push(row);
      else families.set(key, [row]);
    }
  }
  for (const [family, rows] of families) {
    const stated = rows.find((row) => row.compat?.codeMode !== undefined);
    if (!stated) continue;
    for (const row of rows) {
      if (row.compat?.codeMode !== undefined) continue;
      const path = userRowPaths.get(row);
      if (path === undefined) continue; // bundled catalogs are consistent (tested)
      fail(
        configPath(configPath(path, "compat"), "codeMode"),
        `must state a tier ("preferred" or "capable"): another catalog row for the same upstream model (${family}) states one`,
      );
    }
  }
}

function mergeProvider(base: ProviderCatalog, user: ProviderCatalog): ProviderCatalog {
  const models = [...base.models];
  for (const row of user.models) {
    const index = models.findIndex((existing) => existing.id === row.id);
    if (index === -1) models.push(row);
    else models[index] = row;
  }
  const result: ProviderCatalog = { ...base, models };
  if (user.api !== undefined) result.api = user.api;
  if (user.baseUrl !== undefined) result.baseUrl = user.baseUrl;
  if (user.apiKey !== undefined) result.apiKey = user.apiKey;
  return result;
}

function parseProvider(value: unknown, path: string, providerId: string): ProviderCatalog | undefined {
  if (value === undefined) return undefined;
  if (providerId === "" || providerId.includes("/")) {
    fail(path, 'is not a valid provider id (it must be non-empty and contain no "/")');
  }
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, PROVIDER_KEYS);

  const catalog: ProviderCatalog = { models: [] };
  const api = own(value, "api");
  if (api !== undefined) {
    if (!APIS.includes(api as ProviderApi)) fail(configPath(path, "api"), 'must be "openai-completions" or "anthropic-messages"');
    catalog.api = api as ProviderApi;
  }
  const baseUrl = own(value, "baseUrl");
  if (baseUrl !== undefined) {
    if (typeof baseUrl !== "string" || !isHttpUrl(baseUrl)) fail(configPath(path, "baseUrl"), "must be an http(s) URL");
    catalog.baseUrl = baseUrl;
  }
  const apiKey = own(value, "apiKey");
  if (apiKey !== undefined) {
    // Never echo the value: it may be a real key pasted by mistake.
    if (typeof apiKey !== "string" || !SECRET_REF.test(apiKey)) {
      fail(configPath(path, "apiKey"), 'must reference a Worker secret as "env:SECRET_NAME", never a literal key');
    }
    catalog.apiKey = apiKey;
  }
  const models = own(value, "models");
  if (models !== undefined) {
    const modelsPath = configPath(path, "models");
    if (!Array.isArray(models)) fail(modelsPath, "must be an array of model rows");
    const seen = new Set<string>();
    models.forEach((row: unknown, index) => {
      const parsed = parseModelRow(row, configPath(modelsPath, index));
      userRowPaths.set(parsed, configPath(modelsPath, index));
      if (seen.has(parsed.id)) fail(configPath(configPath(modelsPath, index), "id"), `duplicates model id "${parsed.id}"`);
      seen.add(parsed.id);
      catalog.models.push(parsed);
    });
  }
  return catalog;
}

function parseModelRow(value: unknown, path: string): ModelRow {
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, ROW_KEYS);
  const id = own(value, "id");
  if (typeof id !== "string" || id.trim() === "") fail(configPath(path, "id"), "must be a non-empty string");
  const row: ModelRow = { id };

  const compat = own(value, "compat");
  if (compat !== undefined) row.compat = parseCompat(compat, configPath(path, "compat"));
  const cost = own(value, "cost");
  if (cost !== undefined) row.cost = parseCost(cost, configPath(path, "cost"));
  const upstreamModel = own(value, "upstreamModel");
  if (upstreamModel !== undefined) {
    if (typeof upstreamModel !== "string" || upstreamModel.trim() === "") {
      fail(configPath(path, "upstreamModel"), "must be a non-empty string");
    }
    row.upstreamModel = upstreamModel;
  }
  for (const key of TOKEN_COUNT_KEYS) {
    const count = own(value, key);
    if (count === undefined) continue;
    if (typeof count !== "number" || !Number.isSafeInteger(count) || count <= 0) {
      fail(configPath(path, key), "must be a positive integer (tokens)");
    }
    row[key] = count;
  }
  return row;
}

function parseCompat(value: unknown, path: string): ModelCompat {
  if (!isRecord(value)) fail(path, "must be an object");
  for (const key of Object.keys(value)) {
    // `compat.codemode` or `code_mode` would silently keep "auto" from engaging: refuse near misses.
    const meant = COMPAT_READ.find((flag) => flag !== key && squash(flag) === squash(key));
    if (meant !== undefined) {
      throw unknownKey(path, key, `did you mean ${JSON.stringify(meant)}?`);
    }
  }
  const compat: ModelCompat = {};
  const codeMode = own(value, "codeMode");
  if (codeMode !== undefined) {
    if (codeMode !== "preferred" && codeMode !== "capable") fail(configPath(path, "codeMode"), 'must be "preferred" or "capable"');
    compat.codeMode = codeMode;
  }
  const supportsTools = own(value, "supportsTools");
  if (supportsTools !== undefined) {
    if (typeof supportsTools !== "boolean") fail(configPath(path, "supportsTools"), "must be true or false");
    compat.supportsTools = supportsTools;
  }
  return compat;
}

function parseCost(value: unknown, path: string): ModelCost {
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, COST_KEYS);
  const cost: ModelCost = {};
  for (const key of COST_KEYS) {
    const price = own(value, key);
    if (price === undefined) continue;
    if (typeof price !== "number" || !Number.isFinite(price) || price < 0) {
      fail(configPath(path, key), "must be a non-negative number (USD per 1M tokens)");
    }
    cost[key] = price;
  }
  return cost;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

/** `code_mode`, `CodeMode`, `code-mode` → `codemode`. */
function squash(key: string): string {
  return key.toLowerCase().replace(/[_\-\s]/g, "");
}
