import { APPROVALS_KEYS } from "./approval-settings";
import { MCP_SERVER_KEYS } from "../mcp";
import { CODE_MODE_KEYS } from "./parse-code-mode-settings";
import { AGENTS_KEYS, DEFAULTS_KEYS, ENTRY_KEYS, MODEL_ROW_KEYS } from "./parse-agents";
import { MCP_KEYS, MODELS_KEYS, TOP_LEVEL_KEYS } from "./parse-gateway-config";
import { LOGGING_KEYS } from "./parse-logging-section";
import { COMPAT_READ, COST_KEYS, PROVIDER_KEYS, ROW_KEYS } from "./parse-provider-catalogs";
import { CORS_KEYS, GATEWAY_KEYS, RATE_LIMIT_KEYS, SESSION_LIMIT_RANGES } from "./parse-session-limits";
import { AGENT_TOOLS_KEYS, GLOBAL_TOOLS_KEYS, SWARM_KEYS, TOOL_SEARCH_KEYS } from "./parse-tools-section";

/**
 * Every object the parser reads, by path, with the keys it accepts there: the very lists the parsers
 * check (so schema/codemode-config.schema.json can be tested against them). A path segment `*` is any
 * user-chosen key (agent id, model ref, provider id, server name); `[]` is any array entry. `open`:
 * other keys pass through (a provider's own compat flags).
 */
export const CONFIG_KEYS: ReadonlyArray<{ path: string; keys: readonly string[]; open?: true }> = [
  { path: "", keys: TOP_LEVEL_KEYS },
  { path: "tools", keys: GLOBAL_TOOLS_KEYS },
  { path: "tools.codeMode", keys: CODE_MODE_KEYS },
  { path: "tools.toolSearch", keys: TOOL_SEARCH_KEYS },
  { path: "tools.swarm", keys: SWARM_KEYS },
  { path: "agents", keys: AGENTS_KEYS },
  { path: "agents.defaults", keys: DEFAULTS_KEYS },
  { path: "agents.defaults.models.*", keys: MODEL_ROW_KEYS },
  { path: "agents.entries.*", keys: ENTRY_KEYS },
  { path: "agents.entries.*.tools", keys: AGENT_TOOLS_KEYS },
  { path: "agents.entries.*.tools.codeMode", keys: CODE_MODE_KEYS },
  { path: "agents.entries.*.tools.toolSearch", keys: TOOL_SEARCH_KEYS },
  { path: "agents.entries.*.tools.swarm", keys: SWARM_KEYS },
  { path: "agents.entries.*.models.*", keys: MODEL_ROW_KEYS },
  { path: "agents.entries.*.approvals", keys: APPROVALS_KEYS },
  { path: "models", keys: MODELS_KEYS },
  { path: "models.providers.*", keys: PROVIDER_KEYS },
  { path: "models.providers.*.models.[]", keys: ROW_KEYS },
  { path: "models.providers.*.models.[].cost", keys: COST_KEYS },
  { path: "models.providers.*.models.[].compat", keys: COMPAT_READ, open: true },
  { path: "gateway", keys: GATEWAY_KEYS },
  { path: "gateway.sessions", keys: Object.keys(SESSION_LIMIT_RANGES) },
  { path: "gateway.rateLimit", keys: RATE_LIMIT_KEYS },
  { path: "gateway.cors", keys: CORS_KEYS },
  { path: "mcp", keys: MCP_KEYS },
  { path: "mcp.servers.*", keys: MCP_SERVER_KEYS },
  { path: "logging", keys: LOGGING_KEYS },
  { path: "approvals", keys: APPROVALS_KEYS },
];
