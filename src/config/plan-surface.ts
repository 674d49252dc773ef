import { findModel } from "./find-model";
import type { GatewayConfig } from "./gateway-config";
import { resolveToolSearchOptions } from "./resolve-tool-search";
import type { ResolvedToolSearchOptions } from "./tool-search-options";

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
