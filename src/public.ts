/// <reference path="../wasm/wasm.d.ts" />
/// <reference path="./catalog/wink-porter2-stemmer.d.ts" />
/**
 * The package's public surface (`import { createGateway, defineToolPlugin } from "codemode-edge"`):
 * what a Worker embedding the gateway needs, by name. Everything else under src/ is internal and may
 * change without notice. The Durable Object classes come from `createGateway(...)`; the Worker entry
 * exports them under the class names its wrangler.toml binds (src/index.ts is one such entry).
 */
export { createGateway, type Gateway, type GatewayOptions } from "./gateway";
export type { GatewayEnv, HealthAnswer } from "./http";

// Tools: plugins are code registered in the Worker entry.
export { defineToolPlugin, type ToolPluginSpec } from "./tools";
// Swarm's native sub-agent tools (sessions_spawn, agents_wait): list it in `plugins` to offer them (docs/swarm.md).
export { swarmPlugin } from "./swarm";
export type {
  BeforeToolCallResult,
  JsonSchema,
  SessionStore,
  ToolCallEvent,
  ToolContext,
  ToolDefinition,
  ToolHooks,
  ToolNamespace,
  ToolNamespaceSpec,
  ToolPlugin,
  TurnParty,
} from "./tools";

// Configuration: the config module's typed form (`defineConfig`), and the parsed shape and sections.
export { defineConfig } from "./config";
export type { CodemodeApprovalsConfig, CodemodeConfig, CodemodeModelOverride, CodemodeProviderConfig, CodemodeToolsConfig } from "./config";
export type {
  AgentDefaults,
  AgentEntry,
  ApprovalSettings,
  CodeModeEnabled,
  CodeModeSettings,
  GatewayConfig,
  GatewayOperations,
  ModelCompat,
  ModelCost,
  ModelOverride,
  ModelRow,
  ProviderApi,
  ProviderCatalog,
  RateLimitSettings,
  SessionLimits,
  ToolSearchMode,
  ToolSearchSettings,
} from "./config";

// Results of exec/wait (seed 002's model-facing contract).
export type {
  CalledTool,
  CodeModeCompletedResult,
  CodeModeErrorCode,
  CodeModeExecInput,
  CodeModeFailedResult,
  CodeModeLanguage,
  CodeModeOutput,
  CodeModePendingToolCall,
  CodeModeResult,
  CodeModeTelemetry,
  CodeModeWaitInput,
  CodeModeWaitingResult,
  SubAgentTelemetry,
  SurfaceTelemetry,
} from "./code-mode";

// /chat answers and events, and a turn's trajectory.
export type {
  ChatAnswer,
  ChatError,
  ChatEvent,
  ChatMeta,
  PendingClientCall,
  StopReason,
  NestedEntry,
  OuterCall,
  Trajectory,
  TrajectoryRow,
} from "./agent";

// Routes' requests and answers (the typed client, codemode-edge/client, shares them).
export type {
  ApprovalDecision,
  ChatRequest,
  ClientResultAnswer,
  ClientResultBody,
  OpenTurnAnswer,
  PendingApproval,
  TurnDescription,
} from "./session";
export type { ModelTool, OpenTurnRequest } from "./turns";
export type { ClientToolSpec } from "./catalog";
export type { Sampling } from "./providers";

// Errors: the one table of HTTP error codes (status, retryable).
export { ERROR_CODES, isRetryable, type ChatErrorCode, type ErrorCode } from "./errors";
