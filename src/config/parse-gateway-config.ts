import { BUNDLED_PROVIDERS } from "./bundled-providers";
import { ConfigValidationError, emptyRecord, fail, isRecord, own, rejectUnknownKeys } from "./config-validation-error";
import { configPath } from "./config-path";
import { MCP_TOOL_LIST_TTL_MS, mcpServerProblem, type McpServerConfig } from "../mcp";
import type { ConfigResult, GatewayConfig } from "./gateway-config";
import { parseAgents } from "./parse-agents";
import { parseApprovals } from "./approval-settings";
import { parseLoggingSection } from "./parse-logging-section";
import { parseModelAliases } from "./parse-model-aliases";
import { parseGatewayOperations } from "./parse-session-limits";
import { parseProviderCatalogs } from "./parse-provider-catalogs";
import { parseToolsSection } from "./parse-tools-section";

/** The sections this gateway reads (ARCHITECTURE.md, "Configuration"); any other top-level key is refused. */
export const TOP_LEVEL_KEYS = ["tools", "agents", "models", "gateway", "mcp", "logging", "approvals"];
export const MODELS_KEYS = ["providers", "aliases"];
export const MCP_KEYS = ["servers", "allowPrivateAddresses", "toolListTtlMs"];

/**
 * Validates a configuration document (a JSON value). Pure and synchronous; never throws.
 *
 * Reads and validates `tools` (`codeMode`, `toolSearch`, and the seed-documented `sandbox`, `swarm`, `allow`),
 * `agents.defaults.models`, `agents.entries.<agent>.{tools,models}`, `models.providers`, `models.aliases` and `logging.redactPatterns`. Unknown keys in
 * any of these sections are refused, so a typo such as a top-level `tool` is an error rather than a setting
 * that silently never applies. The first problem found is returned with the offending key path; a root
 * that is not an object is reported with path `""`.
 */
export function parseGatewayConfig(raw: unknown): ConfigResult {
  try {
    return { ok: true, config: buildConfig(raw) };
  } catch (error) {
    if (error instanceof ConfigValidationError) return { ok: false, error: { message: error.message, path: error.path } };
    throw error;
  }
}

function buildConfig(raw: unknown): GatewayConfig {
  if (!isRecord(raw)) throw new ConfigValidationError("", "config must be a JSON object");
  rejectUnknownKeys(raw, "", TOP_LEVEL_KEYS);

  const tools = parseToolsSection(own(raw, "tools"), "tools", "global");
  const models = own(raw, "models");
  if (models !== undefined && !isRecord(models)) fail("models", "must be an object");
  if (models !== undefined) rejectUnknownKeys(models, "models", MODELS_KEYS);

  const providers = parseProviderCatalogs(models === undefined ? undefined : own(models, "providers"), "models.providers", BUNDLED_PROVIDERS);

  return {
    raw,
    codeMode: tools.codeMode,
    toolSearch: tools.toolSearch,
    agents: parseAgents(own(raw, "agents"), "agents"),
    providers,
    modelAliases: parseModelAliases(models === undefined ? undefined : own(models, "aliases"), "models.aliases", providers),
    // `gateway.sessions` and `gateway.rateLimit` (parse-session-limits.ts); other `gateway.*` keys stay in `raw`.
    operations: parseGatewayOperations(own(raw, "gateway"), "gateway"),
    mcpServers: parseMcpSection(own(raw, "mcp"), "mcp"),
    mcpAllowPrivateAddresses: parseAllowPrivate(own(raw, "mcp"), "mcp"),
    mcpToolListTtlMs: parseToolListTtl(own(raw, "mcp"), "mcp"),
    redactPatterns: parseLoggingSection(own(raw, "logging"), "logging"),
    approvals: parseApprovals(own(raw, "approvals"), "approvals"),
  };
}

/** `mcp.toolListTtlMs`: how long a server's cached tool listing serves new turns (0: list every turn). */
function parseToolListTtl(value: unknown, path: string): number {
  const ttl = isRecord(value) ? own(value, "toolListTtlMs") : undefined;
  if (ttl === undefined) return MCP_TOOL_LIST_TTL_MS;
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl < 0 || ttl > 86_400_000)
    fail(configPath(path, "toolListTtlMs"), "must be an integer number of milliseconds from 0 to 86400000");
  return ttl;
}

/** `mcp.allowPrivateAddresses`: a boolean, false by default (private-address.ts says why). */
function parseAllowPrivate(value: unknown, path: string): boolean {
  const allow = isRecord(value) ? own(value, "allowPrivateAddresses") : undefined;
  if (allow === undefined) return false;
  if (typeof allow !== "boolean") fail(configPath(path, "allowPrivateAddresses"), "must be true or false");
  return allow;
}

/** `mcp.servers`: MCP servers every turn with tools gets (header values may be `env:NAME` secrets). */
function parseMcpSection(value: unknown, path: string): Record<string, McpServerConfig> {
  const servers = emptyRecord<McpServerConfig>();
  if (value === undefined) return servers;
  if (!isRecord(value)) fail(path, "must be an object { servers }");
  rejectUnknownKeys(value, path, MCP_KEYS);
  const list = own(value, "servers");
  if (list === undefined) return servers;
  const listPath = configPath(path, "servers");
  if (!isRecord(list)) fail(listPath, "must be an object keyed by server name");
  for (const name of Object.keys(list)) {
    const problem = mcpServerProblem(name, list[name], "gateway");
    if (problem) fail(problem.path ? configPath(configPath(listPath, name), problem.path) : configPath(listPath, name), problem.message);
    servers[name] = list[name] as McpServerConfig;
  }
  return servers;
}
