import {
  CODE_MODE_DEFAULTS,
  CODE_MODE_LIMITS,
  CODE_MODE_NUMERIC_KEYS,
  type CodeModeSettings,
  type ResolvedCodeModeOptions,
} from "./code-mode-options";
import type { GatewayConfig } from "./gateway-config";
import { findAgent } from "./find-agent";

/**
 * The code-mode options for runs of `agentId`: the global `tools.codeMode` with
 * `agents.entries.<agentId>.tools.codeMode` laid over it field by field (agent fields win), then defaults.
 *
 * Numbers are rounded down to integers and clamped to the seed's ranges; `searchDefaultLimit` is then
 * clamped to [1, maxSearchLimit]. `enabled` reflects these two `tools.codeMode` levels only; per-model
 * overrides and `"auto"` are decided by `resolveActivation`. Model overrides never change limits.
 * Returns a fresh object.
 */
export function resolveCodeModeOptions(config: GatewayConfig, agentId?: string): ResolvedCodeModeOptions {
  const agent = agentId === undefined ? undefined : findAgent(config, agentId);
  const settings: CodeModeSettings = { ...config.codeMode, ...definedOnly(agent?.codeMode ?? {}) };

  const resolved: ResolvedCodeModeOptions = {
    ...CODE_MODE_DEFAULTS,
    enabled: settings.enabled ?? CODE_MODE_DEFAULTS.enabled,
    languages: [...(settings.languages ?? CODE_MODE_DEFAULTS.languages)],
  };
  for (const key of CODE_MODE_NUMERIC_KEYS) {
    const { min, max } = CODE_MODE_LIMITS[key];
    resolved[key] = clampInteger(settings[key] ?? CODE_MODE_DEFAULTS[key], min, max);
  }
  resolved.searchDefaultLimit = Math.min(resolved.searchDefaultLimit, resolved.maxSearchLimit);
  return resolved;
}

/** Rounds down, then clamps. ±Infinity lands on the bounds; -0 becomes `min`. */
function clampInteger(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(value)));
}

/** The fields of one settings level that were written (an absent field inherits from the level below). */
export function definedOnly<T extends object>(settings: T): T {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)) as T;
}
