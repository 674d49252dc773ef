import type { CodeModeSettings } from "./code-mode-options";
import type { GatewayOperations } from "./parse-session-limits";
import type { ToolSearchSettings } from "./tool-search-options";

/** Wire protocol a provider speaks (ARCHITECTURE.md, "Providers and the chat route"). */
export type ProviderApi = "openai-completions" | "anthropic-messages";

/** Capability metadata owned by a provider catalog; core only reads these generic flags. */
export type ModelCompat = {
  /** `"preferred"`: `"auto"` engages code mode. `"capable"` or absent: only an explicit `true` engages it. */
  codeMode?: "preferred" | "capable";
  /** `false` means the model cannot call tools, so code mode never engages for it. */
  supportsTools?: boolean;
};

/** USD per 1M tokens. */
export type ModelCost = { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };

/** One `models.providers.<providerId>.models[]` row. */
export type ModelRow = {
  id: string;
  compat?: ModelCompat;
  cost?: ModelCost;
  /** The vendor's own name for the weights, only where it differs from `id` (e.g. kimi `k3` → `kimi-k3`). */
  upstreamModel?: string;
  /** Context window in tokens (OpenClaw's `contextWindow`); a positive integer. */
  contextWindow?: number;
  /** Most output tokens one call may ask for (OpenClaw's `maxTokens`); a positive integer. */
  maxTokens?: number;
};

/** One provider catalog after the bundled catalogs were merged under the user's. */
export type ProviderCatalog = {
  api?: ProviderApi;
  baseUrl?: string;
  /** Always `"env:<SECRET_NAME>"`: a reference to a Worker secret, never a literal key. */
  apiKey?: string;
  models: ModelRow[];
};

/** `agents.defaults.models["provider/model"]` or `agents.entries.<agent>.models["provider/model"]`. */
export type ModelOverride = {
  /** Activation override for this exact model; only a boolean (never `"auto"`). */
  codeMode?: boolean;
};

export type AgentDefaults = {
  models: Record<string, ModelOverride>;
  /** `agents.defaults` as written, for sections this module does not interpret. */
  raw: Readonly<Record<string, unknown>>;
};

export type AgentEntry = {
  /** `agents.entries.<agent>.tools.codeMode`, normalized (shorthand → `{ enabled }`). */
  codeMode: CodeModeSettings;
  /** `agents.entries.<agent>.tools.toolSearch`, normalized. */
  toolSearch: ToolSearchSettings;
  models: Record<string, ModelOverride>;
  /** `agents.entries.<agent>.approvals`: added to the global list; its timeout replaces the global one. */
  approvals?: { require: string[]; timeoutSeconds?: number };
  /** `agents.entries.<agent>` as written. */
  raw: Readonly<Record<string, unknown>>;
};

/**
 * The gateway-wide configuration document, validated. Records keyed by user-chosen names (agent ids,
 * provider ids, model refs) have no prototype; read them with `Object.hasOwn` or the helpers here.
 * Treat the whole value as read-only: one instance is shared by every request in the isolate.
 */
export type GatewayConfig = {
  /** The document as given, for sections other modules interpret (e.g. `tools.sandbox`). */
  raw: Readonly<Record<string, unknown>>;
  /** Global `tools.codeMode`, normalized. */
  codeMode: CodeModeSettings;
  /** Global `tools.toolSearch`, normalized (shorthand → `{ enabled }`). */
  toolSearch: ToolSearchSettings;
  agents: { defaults: AgentDefaults; entries: Record<string, AgentEntry> };
  /** Bundled provider catalogs with the user's `models.providers` merged over them. */
  providers: Record<string, ProviderCatalog>;
  /** `models.aliases`: alias → `provider/model` of `providers` (no prototype; read with `resolveModelAlias`). */
  modelAliases: Record<string, string>;
  /** `gateway.sessions` (idle expiry, storage quota) and `gateway.rateLimit`, validated with defaults filled in. */
  operations: GatewayOperations;
  /** `mcp.servers`: attached to every turn that has tools (no prototype; read with `Object.entries`). */
  mcpServers: Record<string, { url: string; headers?: Record<string, string> }>;
  /** `mcp.allowPrivateAddresses`: may a turn's own `mcpServers` name loopback or private hosts (default false)? */
  mcpAllowPrivateAddresses: boolean;
  /** `mcp.toolListTtlMs`: how long a cached tool listing serves new turns (default 300000; 0: never cached). */
  mcpToolListTtlMs: number;
  /**
   * `logging.redactPatterns`, compiled once with the `g` flag (parse-logging-section.ts): masked in stored
   * source, nested-call previews and redacted debug payloads. Shared: use with `String.prototype.replace` only.
   */
  redactPatterns: RegExp[];
  /** Top-level `approvals`: tools that need an operator decision (approval-settings.ts). */
  approvals?: { require: string[]; timeoutSeconds?: number };
};

export type ConfigError = { message: string; path: string };

export type ConfigResult = { ok: true; config: GatewayConfig } | { ok: false; error: ConfigError };
