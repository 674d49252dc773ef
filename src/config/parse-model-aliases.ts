import { emptyRecord, fail, isRecord } from "./config-validation-error";
import { configPath } from "./config-path";
import { findModel } from "./find-model";
import type { GatewayConfig } from "./gateway-config";

// A name a client can send as `model`: printable, no control characters, at most 128 characters.
const ALIAS_NAME = /^[^\u0000-\u001f\u007f]{1,128}$/;

/**
 * `models.aliases`: names a facade client may send as `model` for a `provider/model` of the merged
 * catalogs (`{ "gpt": "openai/gpt-4o" }`). A target must be a catalog row, so a typo is refused at
 * load rather than on the first request; an alias may not shadow a `provider/model` the catalogs list
 * (which one a request meant would then depend on the alias table).
 */
export function parseModelAliases(value: unknown, path: string, providers: GatewayConfig["providers"]): Record<string, string> {
  const aliases = emptyRecord<string>();
  if (value === undefined) return aliases;
  if (!isRecord(value)) fail(path, 'must be an object { "<alias>": "provider/model" }');
  const catalogs = { providers } as GatewayConfig;
  for (const [name, target] of Object.entries(value)) {
    const at = configPath(path, name);
    if (!ALIAS_NAME.test(name)) fail(at, "must be named by 1-128 characters without control characters");
    if (findModel(catalogs, name)) fail(at, `shadows the catalog model ${JSON.stringify(name)}: pick another alias name`);
    if (typeof target !== "string" || !findModel(catalogs, target))
      fail(at, 'must name a "provider/model" listed in models.providers (or a bundled catalog)');
    aliases[name] = target;
  }
  return aliases;
}

/** The `provider/model` a request's `model` names: an alias's target, or the name itself. */
export function resolveModelAlias(config: GatewayConfig, model: string): string {
  return Object.hasOwn(config.modelAliases, model) ? config.modelAliases[model]! : model;
}
