import { emptyRecord, fail, isRecord, own } from "./ConfigValidationError";
import { configPath } from "./configPath";
import type { AgentDefaults, AgentEntry, ModelOverride } from "./GatewayConfig";
import { parseCodeModeSettings } from "./parseCodeModeSettings";

/** `provider/model`: a provider id without "/", then a non-empty model id (which may itself contain "/"). */
const EXACT_MODEL_REF = /^[^/]+\/.+$/;

/**
 * Validates the parts of `agents` this module reads: `agents.defaults.models`, and per agent
 * `agents.entries.<agent>.tools.codeMode` and `.models`. Everything else is kept as written in `raw`.
 */
export function parseAgents(
  value: unknown,
  path: string,
): { defaults: AgentDefaults; entries: Record<string, AgentEntry> } {
  const entries = emptyRecord<AgentEntry>();
  if (value === undefined) return { defaults: { models: emptyRecord(), raw: {} }, entries };
  if (!isRecord(value)) fail(path, "must be an object");

  const defaultsPath = configPath(path, "defaults");
  const defaultsValue = own(value, "defaults");
  let defaults: AgentDefaults = { models: emptyRecord(), raw: {} };
  if (defaultsValue !== undefined) {
    if (!isRecord(defaultsValue)) fail(defaultsPath, "must be an object");
    defaults = {
      models: parseModelOverrides(own(defaultsValue, "models"), configPath(defaultsPath, "models")),
      raw: defaultsValue,
    };
  }

  const entriesPath = configPath(path, "entries");
  const entriesValue = own(value, "entries");
  if (entriesValue !== undefined) {
    if (!isRecord(entriesValue)) fail(entriesPath, "must be an object keyed by agent id");
    for (const agentId of Object.keys(entriesValue)) {
      const entry = parseAgentEntry(entriesValue[agentId], configPath(entriesPath, agentId));
      if (entry !== undefined) entries[agentId] = entry;
    }
  }
  return { defaults, entries };
}

function parseAgentEntry(value: unknown, path: string): AgentEntry | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) fail(path, "must be an object");
  const toolsPath = configPath(path, "tools");
  const tools = own(value, "tools");
  if (tools !== undefined && !isRecord(tools)) fail(toolsPath, "must be an object");
  return {
    codeMode: parseCodeModeSettings(tools === undefined ? undefined : own(tools, "codeMode"), configPath(toolsPath, "codeMode")),
    models: parseModelOverrides(own(value, "models"), configPath(path, "models")),
    raw: value,
  };
}

/**
 * `models` keyed by exact `"provider/model"`. Rows may carry other settings (e.g. `agentRuntime`), which are
 * kept in `raw`; `codeMode` must be a boolean and may not appear on a wildcard row such as `"openai/*"`.
 */
function parseModelOverrides(value: unknown, path: string): Record<string, ModelOverride> {
  const overrides = emptyRecord<ModelOverride>();
  if (value === undefined) return overrides;
  if (!isRecord(value)) fail(path, 'must be an object keyed by "provider/model"');

  for (const modelRef of Object.keys(value)) {
    const rowPath = configPath(path, modelRef);
    const row = value[modelRef];
    if (row === undefined) continue;
    if (!isRecord(row)) fail(rowPath, "must be an object");
    const override: ModelOverride = {};
    const codeMode = own(row, "codeMode");
    if (codeMode !== undefined) {
      const codeModePath = configPath(rowPath, "codeMode");
      if (modelRef.includes("*")) {
        fail(codeModePath, 'cannot be set on a wildcard model row; use an exact "provider/model" key');
      }
      if (!EXACT_MODEL_REF.test(modelRef)) {
        fail(codeModePath, 'can only be set on an exact "provider/model" key');
      }
      if (codeMode === "auto") fail(codeModePath, 'must be true or false ("auto" belongs on tools.codeMode)');
      if (typeof codeMode !== "boolean") fail(codeModePath, "must be true or false");
      override.codeMode = codeMode;
    }
    overrides[modelRef] = override;
  }
  return overrides;
}
