import type { CodeModeEnabled } from "./code-mode-options";
import { findAgent } from "./find-agent";
import { findModel } from "./find-model";
import type { GatewayConfig, ModelOverride } from "./gateway-config";

/**
 * The activation decision for one run.
 * - `enabled`: the first explicit setting in precedence order (or the global default `false`).
 * - `source`: which level supplied it; `"global"` also when nothing was set anywhere.
 * - `preferred`: the run's model is catalog-flagged `compat.codeMode: "preferred"` and can call tools.
 * - `engaged`: whether code mode owns this run's tool surface (before the run's own tool policy: a run
 *   with no tools still does not get the surface).
 */
export type Activation = {
  engaged: boolean;
  enabled: CodeModeEnabled;
  source: "agent-model" | "agent" | "defaults-model" | "global";
  preferred: boolean;
};

/**
 * Resolves activation from the first explicit setting, in this order (seed 002, "Override one model"):
 * 1. `agents.entries.<agent>.models["provider/model"].codeMode`
 * 2. `agents.entries.<agent>.tools.codeMode.enabled` (or its shorthand)
 * 3. `agents.defaults.models["provider/model"].codeMode`
 * 4. `tools.codeMode.enabled` (or its shorthand), default `false`.
 *
 * `true` engages; `"auto"` engages only for a catalog-preferred model; `false` never does. A model whose
 * catalog row says `supportsTools: false` never engages, whatever the setting. An unknown model is not
 * preferred, so `"auto"` leaves it on direct tools, while an explicit `true` still engages it.
 */
export function resolveActivation(config: GatewayConfig, run: { agentId?: string; model?: string }): Activation {
  const agent = run.agentId === undefined ? undefined : findAgent(config, run.agentId);
  const { enabled, source } = pickSetting(config, agent, run.model);

  const row = run.model === undefined ? undefined : findModel(config, run.model);
  const supportsTools = row?.compat?.supportsTools !== false;
  const preferred = supportsTools && row?.compat?.codeMode === "preferred";
  const engaged = supportsTools && (enabled === true || (enabled === "auto" && preferred));
  return { engaged, enabled, source, preferred };
}

function pickSetting(config: GatewayConfig, agent: ReturnType<typeof findAgent>, model: string | undefined): Pick<Activation, "enabled" | "source"> {
  const agentModel = model === undefined || agent === undefined ? undefined : overrideFor(agent.models, model);
  if (agentModel !== undefined) return { enabled: agentModel, source: "agent-model" };
  if (agent?.codeMode.enabled !== undefined) return { enabled: agent.codeMode.enabled, source: "agent" };
  const defaultsModel = model === undefined ? undefined : overrideFor(config.agents.defaults.models, model);
  if (defaultsModel !== undefined) return { enabled: defaultsModel, source: "defaults-model" };
  return { enabled: config.codeMode.enabled ?? false, source: "global" };
}

function overrideFor(models: Record<string, ModelOverride>, model: string): boolean | undefined {
  return Object.hasOwn(models, model) ? models[model]?.codeMode : undefined;
}
