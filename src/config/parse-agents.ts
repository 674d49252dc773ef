import { parseApprovals } from "./approval-settings";
import { AGENT_ID_PATTERN, AGENT_ID_RULE } from "./agent-id";
import { emptyRecord, fail, isRecord, own, rejectUnknownKeys } from "./config-validation-error";
import { configPath } from "./config-path";
import type { AgentDefaults, AgentEntry, ModelOverride } from "./gateway-config";
import { parseToolsSection } from "./parse-tools-section";

/** `provider/model`: a provider id without "/", then a non-empty model id (which may itself contain "/"). */
const EXACT_MODEL_REF = /^[^/]+\/.+$/;

/** Keys this gateway reads; anything else in these sections is refused (a typo must not look applied). */
export const AGENTS_KEYS = ["defaults", "entries"];
export const DEFAULTS_KEYS = ["models"];
export const ENTRY_KEYS = ["tools", "models", "approvals"];
/** A model row may also select its runtime (seed: `agentRuntime: { id: "openclaw" }`). */
export const MODEL_ROW_KEYS = ["codeMode", "agentRuntime"];

/**
 * Validates `agents`: `agents.defaults.models`, and per agent `agents.entries.<agent>.tools` and
 * `.models`. Unknown keys are refused, and so are agent ids no request could name.
 */
export function parseAgents(value: unknown, path: string): { defaults: AgentDefaults; entries: Record<string, AgentEntry> } {
  const entries = emptyRecord<AgentEntry>();
  if (value === undefined) return { defaults: { models: emptyRecord(), raw: {} }, entries };
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, AGENTS_KEYS);

  const defaultsPath = configPath(path, "defaults");
  const defaultsValue = own(value, "defaults");
  let defaults: AgentDefaults = { models: emptyRecord(), raw: {} };
  if (defaultsValue !== undefined) {
    if (!isRecord(defaultsValue)) fail(defaultsPath, "must be an object");
    rejectUnknownKeys(defaultsValue, defaultsPath, DEFAULTS_KEYS);
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
      if (!AGENT_ID_PATTERN.test(agentId)) {
        fail(
          configPath(entriesPath, agentId),
          `is not a valid agent id: a turn's agentId must be ${AGENT_ID_RULE}, so this entry could never be selected`,
        );
      }
      const entry = parseAgentEntry(entriesValue[agentId], configPath(entriesPath, agentId));
      if (entry !== undefined) entries[agentId] = entry;
    }
  }
  return { defaults, entries };
}

function parseAgentEntry(value: unknown, path: string): AgentEntry | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) fail(path, "must be an object");
  rejectUnknownKeys(value, path, ENTRY_KEYS);
  const tools = parseToolsSection(own(value, "tools"), configPath(path, "tools"), "agent");
  return {
    codeMode: tools.codeMode,
    toolSearch: tools.toolSearch,
    models: parseModelOverrides(own(value, "models"), configPath(path, "models")),
    approvals: parseApprovals(own(value, "approvals"), configPath(path, "approvals")),
    raw: value,
  };
}

/**
 * `models` keyed by exact `"provider/model"`. Rows may also carry `agentRuntime` (kept in `raw`, not
 * interpreted here); `codeMode` must be a boolean and may not appear on a wildcard row such as `"openai/*"`.
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
    rejectUnknownKeys(row, rowPath, MODEL_ROW_KEYS);
    const agentRuntime = own(row, "agentRuntime");
    if (agentRuntime !== undefined && !isRecord(agentRuntime))
      fail(configPath(rowPath, "agentRuntime"), 'must be an object such as { id: "openclaw" }');
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
