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
} from "./code-mode-options";
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
} from "./gateway-config";
export { parseGatewayConfig } from "./parse-gateway-config";
export { checkConfigModule, DEFAULT_GATEWAY_CONFIG, loadGatewayConfig } from "./load-gateway-config";
export {
  defineConfig,
  type CodemodeApprovalsConfig,
  type CodemodeConfig,
  type CodemodeModelOverride,
  type CodemodeProviderConfig,
  type CodemodeToolsConfig,
} from "./codemode-config";
export { parseJsonc, type JsoncResult } from "./jsonc";
export { overlayConfig } from "./overlay-config";
export { resolveCodeModeOptions } from "./resolve-code-mode-options";
export { resolveActivation, type Activation } from "./resolve-activation";
export { findModel, findProvider, splitModelRef, type CatalogModel } from "./find-model";
export { findAgent } from "./find-agent";
export {
  DEFAULT_SWARM_MAX_DEPTH,
  DEFAULT_SWARM_MODEL_CALLS,
  MAX_SWARM_DEPTH,
  resolveSwarm,
  resolveSwarmMaxDepth,
  resolveSwarmModelCalls,
} from "./resolve-swarm";
export { resolveModelAlias } from "./parse-model-aliases";
export { configPath } from "./config-path";
export { BUNDLED_PROVIDERS, FIRST_PARTY_PROVIDERS, RESELLER_PROVIDERS } from "./bundled-providers";
export { modelFamilyKey } from "./model-family-key";
export {
  CORS_DEFAULTS,
  MAX_CORS_ORIGINS,
  type CorsSettings,
  RATE_LIMIT_DEFAULTS,
  SESSION_LIMIT_DEFAULTS,
  SESSION_LIMIT_RANGES,
  type GatewayOperations,
  type RateLimitSettings,
  type SessionLimits,
} from "./parse-session-limits";
export { AGENT_ID_PATTERN, AGENT_ID_RULE } from "./agent-id";
export { MAX_REDACT_PATTERN_CHARS, MAX_REDACT_PATTERNS } from "./parse-logging-section";

export {
  TOOL_SEARCH_MODES,
  TOOL_SEARCH_NUMERIC_KEYS,
  TOOL_SEARCH_DEFAULTS,
  TOOL_SEARCH_LIMITS,
  type ToolSearchMode,
  type ToolSearchNumericKey,
  type ToolSearchSettings,
  type ResolvedToolSearchOptions,
} from "./tool-search-options";
export { resolveToolSearchOptions } from "./resolve-tool-search";
export { planSurface, type SurfacePlan } from "./plan-surface";
export {
  APPROVAL_TIMEOUT_DEFAULT_SECONDS,
  APPROVAL_TIMEOUT_RANGE,
  MAX_APPROVAL_PATTERNS,
  APPROVALS_OFF,
  parseApprovals,
  resolveApprovals,
  matchesToolPattern,
  type ApprovalSettings,
} from "./approval-settings";
export { CONFIG_KEYS } from "./config-keys";
