import { findAgent } from "./find-agent";
import type { GatewayConfig } from "./gateway-config";
import { definedOnly } from "./resolve-code-mode-options";
import {
  TOOL_SEARCH_DEFAULTS,
  TOOL_SEARCH_LIMITS,
  TOOL_SEARCH_NUMERIC_KEYS,
  type ResolvedToolSearchOptions,
  type ToolSearchSettings,
} from "./tool-search-options";

/**
 * Tool Search options for runs of `agentId`: global `tools.toolSearch` with the agent's
 * `tools.toolSearch` laid over it field by field (agent fields win), then seed 004's defaults.
 * Numbers are rounded down and clamped (tool-search-options.ts). Returns a fresh object.
 */
export function resolveToolSearchOptions(config: GatewayConfig, agentId?: string): ResolvedToolSearchOptions {
  const agent = agentId === undefined ? undefined : findAgent(config, agentId);
  const settings: ToolSearchSettings = { ...config.toolSearch, ...definedOnly(agent?.toolSearch ?? {}) };
  const resolved: ResolvedToolSearchOptions = {
    ...TOOL_SEARCH_DEFAULTS,
    enabled: settings.enabled ?? TOOL_SEARCH_DEFAULTS.enabled,
    mode: settings.mode ?? TOOL_SEARCH_DEFAULTS.mode,
  };
  for (const key of TOOL_SEARCH_NUMERIC_KEYS) {
    const { min, max } = TOOL_SEARCH_LIMITS[key];
    resolved[key] = Math.min(max, Math.max(min, Math.floor(settings[key] ?? TOOL_SEARCH_DEFAULTS[key])));
  }
  resolved.searchDefaultLimit = Math.min(resolved.searchDefaultLimit, resolved.maxSearchLimit);
  return resolved;
}
