/** Public surface of the gateway configuration (seed 002 "Configuration", ARCHITECTURE.md "Configuration"). */
export {
  CODE_MODE_DEFAULTS,
  CODE_MODE_LANGUAGES,
  CODE_MODE_LIMITS,
  CODE_MODE_NUMERIC_KEYS,
  type CodeModeEnabled,
  type CodeModeNumericKey,
  type CodeModeSettings,
  type ResolvedCodeModeOptions,
} from "./codeModeOptions";
export type {
  AgentDefaults,
  AgentEntry,
  ConfigError,
  ConfigResult,
  GatewayConfig,
  ModelCompat,
  ModelCost,
  ModelOverride,
  ModelRow,
  ProviderApi,
  ProviderCatalog,
} from "./GatewayConfig";
export { parseGatewayConfig } from "./parseGatewayConfig";
export { DEFAULT_GATEWAY_CONFIG, loadGatewayConfig } from "./loadGatewayConfig";
export { resolveCodeModeOptions } from "./resolveCodeModeOptions";
export { resolveActivation, type Activation } from "./resolveActivation";
export { findModel, findProvider, splitModelRef, type CatalogModel } from "./findModel";
export { findAgent } from "./findAgent";
export { BUNDLED_PROVIDERS, FIRST_PARTY_PROVIDERS, RESELLER_PROVIDERS } from "./bundled-providers";
export { modelFamilyKey } from "./modelFamilyKey";
export {
  RATE_LIMIT_DEFAULTS,
  SESSION_LIMIT_DEFAULTS,
  SESSION_LIMIT_RANGES,
  type GatewayOperations,
  type RateLimitSettings,
  type SessionLimits,
} from "./parse-session-limits";
export { AGENT_ID_PATTERN, AGENT_ID_RULE } from "./agentId";
