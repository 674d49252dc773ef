import { BUNDLED_PROVIDERS } from "./bundled-providers";
import { ConfigValidationError, fail, isRecord, own } from "./ConfigValidationError";
import type { ConfigResult, GatewayConfig } from "./GatewayConfig";
import { parseAgents } from "./parseAgents";
import { parseCodeModeSettings } from "./parseCodeModeSettings";
import { parseGatewayOperations } from "./parse-session-limits";
import { parseProviderCatalogs } from "./parseProviderCatalogs";

/**
 * Validates a configuration document (a JSON value). Pure and synchronous; never throws.
 *
 * Reads and validates `tools.codeMode`, `agents.defaults.models`, `agents.entries.<agent>.{tools.codeMode,models}`
 * and `models.providers`. Every other key (top-level or inside those sections, except inside `tools.codeMode`)
 * is accepted and kept in `config.raw`. The first problem found is returned with the offending key path;
 * a root that is not an object is reported with path `""`.
 */
export function parseGatewayConfig(raw: unknown): ConfigResult {
  try {
    return { ok: true, config: buildConfig(raw) };
  } catch (error) {
    if (error instanceof ConfigValidationError) return { ok: false, error: { message: error.message, path: error.path } };
    throw error;
  }
}

function buildConfig(raw: unknown): GatewayConfig {
  if (!isRecord(raw)) throw new ConfigValidationError("", "config must be a JSON object");

  const tools = own(raw, "tools");
  if (tools !== undefined && !isRecord(tools)) fail("tools", "must be an object");
  const models = own(raw, "models");
  if (models !== undefined && !isRecord(models)) fail("models", "must be an object");

  return {
    raw,
    codeMode: parseCodeModeSettings(tools === undefined ? undefined : own(tools, "codeMode"), "tools.codeMode"),
    toolSearch: tools === undefined ? undefined : own(tools, "toolSearch"),
    agents: parseAgents(own(raw, "agents"), "agents"),
    providers: parseProviderCatalogs(
      models === undefined ? undefined : own(models, "providers"),
      "models.providers",
      BUNDLED_PROVIDERS,
    ),
    // `gateway.sessions` and `gateway.rateLimit` (parse-session-limits.ts); other `gateway.*` keys stay in `raw`.
    operations: parseGatewayOperations(own(raw, "gateway"), "gateway"),
  };
}
