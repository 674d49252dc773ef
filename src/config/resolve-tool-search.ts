import { findAgent } from "./find-agent";
import { findModel } from "./find-model";
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

/**
 * How a run's model-visible tools are shaped (seed 002 "Activation", seed 004 "Modes"):
 * - no tools for the run → `none`;
 * - code mode engaged → `code_mode` (Tool Search's compaction never applies then);
 * - Tool Search enabled for the agent and the model can call tools → `tool_search` in its mode,
 *   `"code"` falling back to `"tools"` when the sandbox cannot start (before compaction);
 * - otherwise → `direct`.
 */
export type SurfacePlan =
  { kind: "none" } | { kind: "code_mode" } | { kind: "tool_search"; options: ResolvedToolSearchOptions; fallbackFrom?: "code" } | { kind: "direct" };

export function planSurface(
  config: GatewayConfig,
  run: { agentId?: string; model?: string; toolsActive: boolean; codeModeEngaged: boolean; sandboxStarts: boolean },
): SurfacePlan {
  if (!run.toolsActive) return { kind: "none" };
  if (run.codeModeEngaged) return { kind: "code_mode" };
  const options = resolveToolSearchOptions(config, run.agentId);
  const row = run.model === undefined ? undefined : findModel(config, run.model);
  if (!options.enabled || row?.compat?.supportsTools === false) return { kind: "direct" };
  if (options.mode === "code" && !run.sandboxStarts) return { kind: "tool_search", options: { ...options, mode: "tools" }, fallbackFrom: "code" };
  return { kind: "tool_search", options };
}
