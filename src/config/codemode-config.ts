import type { CodeModeLanguage } from "../code-mode";
import type { CodeModeEnabled, CodeModeNumericKey } from "./code-mode-options";
import type { ModelCompat, ModelCost, ProviderApi } from "./gateway-config";
import type { ToolSearchMode, ToolSearchNumericKey } from "./tool-search-options";

/**
 * The configuration document as written (the input of the parser; `GatewayConfig` is its validated
 * form): what `CODEMODE_CONFIG` holds as JSONC and what a config module passes to
 * `createGateway({ config })`. Every key is optional: a document is laid over the defaults (code mode
 * on). schema/codemode-config.schema.json describes the same keys for editors.
 */
export type CodemodeConfig = {
  tools?: CodemodeToolsConfig & {
    /** Seed-documented keys accepted so carried-over configs keep loading. */
    sandbox?: Record<string, unknown>;
    allow?: string[];
  };
  agents?: {
    defaults?: { models?: Record<string, CodemodeModelOverride> };
    entries?: Record<string, { tools?: CodemodeToolsConfig; models?: Record<string, CodemodeModelOverride>; approvals?: CodemodeApprovalsConfig }>;
  };
  /** `aliases`: names the `/v1/chat/completions` and `/v1/messages` clients may send as `model` (alias → "provider/model"). */
  models?: { providers?: Record<string, CodemodeProviderConfig>; aliases?: Record<string, string> };
  gateway?: {
    sessions?: { turnIdleSeconds?: number; sessionIdleSeconds?: number; maxTurnsPerSession?: number; maxStoredBytes?: number };
    rateLimit?: { enabled?: boolean; retryAfterSeconds?: number };
    cors?: { allowedOrigins?: string[]; maxAgeSeconds?: number };
  };
  mcp?: { servers?: Record<string, { url: string; headers?: Record<string, string> }>; allowPrivateAddresses?: boolean; toolListTtlMs?: number };
  logging?: { redactPatterns?: string[] };
  approvals?: CodemodeApprovalsConfig;
};

export type CodemodeToolsConfig = {
  codeMode?:
    | CodeModeEnabled
    | ({ enabled?: CodeModeEnabled; runtime?: "quickjs-wasi"; mode?: "only"; languages?: CodeModeLanguage[] } & Partial<
        Record<CodeModeNumericKey, number>
      >);
  toolSearch?: boolean | ({ enabled?: boolean; mode?: ToolSearchMode } & Partial<Record<ToolSearchNumericKey, number>>);
  swarm?: boolean | { enabled?: boolean };
};

export type CodemodeModelOverride = { codeMode?: boolean; agentRuntime?: { id: string } & Record<string, unknown> };

export type CodemodeApprovalsConfig = { require?: string[]; timeoutSeconds?: number };

export type CodemodeProviderConfig = {
  api?: ProviderApi;
  baseUrl?: string;
  /** `"env:SECRET_NAME"`: a Worker secret, never a literal key. */
  apiKey?: `env:${string}`;
  headers?: Record<string, string>;
  models?: Array<{
    id: string;
    compat?: ModelCompat & Record<string, unknown>;
    cost?: ModelCost;
    upstreamModel?: string;
    name?: string;
    reasoning?: boolean;
    input?: string[];
    contextWindow?: number;
    contextTokens?: number;
    maxTokens?: number;
  }>;
};

/**
 * A typed config module for the Worker entry: `createGateway({ plugins, config: defineConfig({ ... }) })`.
 * Bundled with the Worker (no var size cap); `CODEMODE_CONFIG`, when set, is laid over it key by key.
 */
export function defineConfig(config: CodemodeConfig): CodemodeConfig {
  return config;
}
