import type { CodeModeSettings } from "./code-mode-options";
import { TOOL_SEARCH_MODES, TOOL_SEARCH_NUMERIC_KEYS, type ToolSearchSettings } from "./tool-search-options";
import { fail, isRecord, own, rejectUnknownKeys } from "./config-validation-error";
import { configPath } from "./config-path";
import { parseCodeModeSettings } from "./parse-code-mode-settings";

/**
 * Keys of the gateway-wide `tools` section. `codeMode` and `toolSearch` are interpreted here; `sandbox`, `swarm` and `allow` are OpenClaw settings the seed documents
 * (`tools.sandbox.tools.alsoAllow`, `tools.swarm: false`, an empty `tools.allow` list), accepted
 * so carried-over configs keep loading. Anything else is refused.
 */
export const GLOBAL_TOOLS_KEYS = ["codeMode", "toolSearch", "sandbox", "swarm", "allow"] as const;
/** An agent's `tools`: its Code Mode and Tool Search overrides and, as the seed documents, its Swarm opt-out. */
export const AGENT_TOOLS_KEYS = ["codeMode", "toolSearch", "swarm"] as const;
export const TOOL_SEARCH_KEYS = ["enabled", "mode", ...TOOL_SEARCH_NUMERIC_KEYS] as const;

export const SWARM_KEYS = ["enabled", "maxModelCalls", "maxDepth"] as const;

export type ToolsSection = { codeMode: CodeModeSettings; toolSearch: ToolSearchSettings };

/** Validates `tools` (global) or `agents.entries.<agent>.tools` at `path`. */
export function parseToolsSection(value: unknown, path: string, scope: "global" | "agent"): ToolsSection {
  if (value === undefined) return { codeMode: {}, toolSearch: {} };
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, scope === "global" ? GLOBAL_TOOLS_KEYS : AGENT_TOOLS_KEYS);

  const swarm = own(value, "swarm");
  if (swarm !== undefined) parseSwarm(swarm, configPath(path, "swarm"));
  const toolSearch = parseToolSearch(own(value, "toolSearch"), configPath(path, "toolSearch"));
  const sandbox = own(value, "sandbox");
  if (sandbox !== undefined && !isRecord(sandbox)) fail(configPath(path, "sandbox"), "must be an object");
  const allow = own(value, "allow");
  if (allow !== undefined) parseStringList(allow, configPath(path, "allow"));

  return { codeMode: parseCodeModeSettings(own(value, "codeMode"), configPath(path, "codeMode")), toolSearch };
}

/** `tools.swarm: false` or `tools.swarm.enabled: false` (seed, "Use Swarm for agent fan-out"), `maxModelCalls`, `maxDepth`. */
function parseSwarm(value: unknown, path: string): void {
  if (typeof value === "boolean") return;
  if (!isRecord(value)) fail(path, "must be true, false or an object { enabled }");
  rejectUnknownKeys(value, path, SWARM_KEYS);
  const enabled = own(value, "enabled");
  if (enabled !== undefined && typeof enabled !== "boolean") fail(configPath(path, "enabled"), "must be true or false");
  const calls = own(value, "maxModelCalls");
  if (calls !== undefined && (typeof calls !== "number" || !Number.isInteger(calls) || calls < 1 || calls > MAX_SWARM_MODEL_CALLS))
    fail(configPath(path, "maxModelCalls"), `must be an integer from 1 to ${MAX_SWARM_MODEL_CALLS}`);
  // Any integer loads (resolveSwarmMaxDepth clamps it to 1–3); anything else is a mistake.
  const depth = own(value, "maxDepth");
  if (depth !== undefined && (typeof depth !== "number" || !Number.isInteger(depth)))
    fail(configPath(path, "maxDepth"), "must be an integer (levels of sub-agents: 1 to 3; others are clamped)");
}

/** The highest `tools.swarm.maxModelCalls` (16 sub-agents of 64 assistant turns each). */
export const MAX_SWARM_MODEL_CALLS = 1024;

/**
 * `tools.toolSearch` (seed 004): `true`/`false`, or an object, which enables Tool Search unless it
 * says `enabled: false` (seed 004's `{ toolSearch: { mode: "tools" } }` turns the fallback tools on).
 */
function parseToolSearch(value: unknown, path: string): ToolSearchSettings {
  if (value === undefined) return {};
  if (typeof value === "boolean") return { enabled: value };
  if (!isRecord(value)) fail(path, "must be true, false or an object { enabled, mode, codeTimeoutMs, searchDefaultLimit, maxSearchLimit }");
  rejectUnknownKeys(value, path, TOOL_SEARCH_KEYS);
  const settings: ToolSearchSettings = { enabled: true };
  const enabled = own(value, "enabled");
  if (enabled !== undefined) {
    if (typeof enabled !== "boolean") fail(configPath(path, "enabled"), "must be true or false");
    settings.enabled = enabled;
  }
  const mode = own(value, "mode");
  if (mode !== undefined) {
    if (!TOOL_SEARCH_MODES.includes(mode as never)) {
      fail(configPath(path, "mode"), `must be one of ${TOOL_SEARCH_MODES.map((m) => JSON.stringify(m)).join(", ")}`);
    }
    settings.mode = mode as ToolSearchSettings["mode"];
  }
  for (const key of TOOL_SEARCH_NUMERIC_KEYS) {
    const field = own(value, key);
    if (field === undefined) continue;
    if (typeof field !== "number" || !Number.isFinite(field)) fail(configPath(path, key), "must be a number");
    settings[key] = field;
  }
  return settings;
}

function parseStringList(value: unknown, path: string): void {
  if (!Array.isArray(value)) fail(path, "must be an array of tool names");
  value.forEach((entry: unknown, index) => {
    if (typeof entry !== "string" || entry === "") fail(configPath(path, index), "must be a non-empty string");
  });
}
