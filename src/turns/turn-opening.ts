import { CATALOGS, isToolAllowed } from "../catalog";
import type { CatalogProjection, ClientToolSpec, McpServerTools } from "../catalog";
import { assignMcpNames, McpServers, type McpServerRecord, type McpServersOptions } from "../mcp";
import type { StoredMcpServer } from "./turn-spec";
import {
  findAgent,
  MAX_SWARM_DEPTH,
  planSurface,
  resolveActivation,
  resolveApprovals,
  resolveCodeModeOptions,
  resolveSwarm,
  type GatewayConfig,
} from "../config";
import type { SubAgentDepth, ToolPlugin } from "../tools";
import { MCP_SERVER_OPS } from "./mcp-runtime";
import { checkSurface } from "./surface-check";
import { modelSurface, type ModelTool, type SurfaceShape } from "./surface";
import type { TurnSpec } from "./turn-spec";
import type { SurfaceTelemetry } from "../code-mode";
import { SWARM_PLUGIN_ID } from "../guest-names";

/** A validated `POST …/turns` body (the HTTP layer checks shapes; this decides policy). */
export type OpenTurnRequest = {
  agentId?: string;
  model?: string;
  allow?: string[];
  deny?: string[];
  disableTools?: boolean;
  clientTools?: ClientToolSpec[];
  mcpServers?: Record<string, { url: string; headers?: Record<string, string> }>;
  senderId?: string;
  senderName?: string;
  channel?: string;
};

/**
 * A turn opened by Swarm's `sessions_spawn` for a sub-agent: its place in the tree travels with
 * the child's request (over the session objects' RPC, src/swarm), never through the HTTP edge,
 * whose validators build an `OpenTurnRequest` field by field.
 */
export type SubAgentTurnRequest = OpenTurnRequest & { subAgent?: SubAgentDepth };

/** A sub-agent's depth as stored: integers within 1–MAX_SWARM_DEPTH; anything malformed fails closed (deepest, no room to spawn). */
function subAgentDepth(d: SubAgentDepth): SubAgentDepth {
  const within = (n: unknown, otherwise: number) =>
    typeof n === "number" && Number.isInteger(n) ? Math.min(MAX_SWARM_DEPTH, Math.max(1, n)) : otherwise;
  return { depth: within(d.depth, MAX_SWARM_DEPTH), maxDepth: within(d.maxDepth, 1) };
}

/**
 * The seed's activation order: effective tools → allow/deny → activation → surface (code mode,
 * else Tool Search, else direct tools). Runs that intentionally have no tools (`disableTools`,
 * empty allow list) engage nothing. `sandboxStarts`: whether a QuickJS VM can start in this
 * isolate (Tool Search's `"code"` mode falls back to `"tools"` before compaction when it cannot;
 * code mode never falls back — its cells fail with `runtime_unavailable`).
 */
export function planTurn(
  config: GatewayConfig,
  plugins: readonly ToolPlugin[],
  req: SubAgentTurnRequest,
  ids: { turnId: string; tenantId: string; sessionId: string; counterScope: string; now: number },
  found: { sandboxStarts?: boolean; mcp?: McpDiscovery } = {},
): { ok: true; spec: TurnSpec; tools: ModelTool[] } | { ok: false; message: string } {
  const sandboxStarts = found.sandboxStarts ?? true;
  const active = toolsActive(req);
  const policy = { allow: req.allow, deny: req.deny };
  // Swarm off (`tools.swarm: false`, globally or for the agent): its native tools are not the turn's.
  const effective = resolveSwarm(config, req.agentId) ? plugins : withoutSwarm(plugins);
  const catalog = active
    ? // The same inputs (plugins, cached MCP listings, client tools, policy) give the same catalog: built once.
      CATALOGS.build({ plugins: effective, mcpServers: found.mcp?.listed, clientTools: req.clientTools, policy })
    : { entries: [], direct: [] };
  const activation = resolveActivation(config, { agentId: req.agentId, model: req.model });
  const engaged = active && activation.engaged;
  const options = resolveCodeModeOptions(config, req.agentId);
  const plan = planSurface(config, { agentId: req.agentId, model: req.model, toolsActive: active, codeModeEngaged: engaged, sandboxStarts });
  const shape: SurfaceShape =
    plan.kind === "code_mode"
      ? { kind: "code_mode", languages: options.languages }
      : plan.kind === "tool_search"
        ? { kind: "tool_search", toolSearch: { ...withoutEnabled(plan.options), ...(plan.fallbackFrom ? { fallbackFrom: plan.fallbackFrom } : {}) } }
        : plan;
  const tools = modelSurface(catalog, shape);
  // Fail closed: a surface that is not exactly what the activation allows is never sent.
  const check = checkSurface(tools, catalog, shape);
  if (!check.ok) return check;
  const spec: TurnSpec = {
    turnId: ids.turnId,
    tenantId: ids.tenantId,
    sessionId: ids.sessionId,
    ...(req.agentId !== undefined ? { agentId: req.agentId } : {}),
    ...(req.model !== undefined ? { model: req.model } : {}),
    codeModeEngaged: engaged,
    ...(shape.kind === "tool_search" ? { toolSearch: shape.toolSearch } : {}),
    ...(shape.kind !== "code_mode" ? { surface: surfaceTelemetry(shape, tools) } : {}),
    options,
    catalog,
    ...(active && found.mcp && found.mcp.servers.length > 0
      ? { mcp: { servers: found.mcp.servers.map((s) => ({ ...s, ops: MCP_SERVER_OPS.filter((op) => isToolAllowed(policy, `${s.name}__${op}`)) })) } }
      : {}),
    counterScope: ids.counterScope,
    createdAt: ids.now,
    approvals: resolveApprovals(config.approvals, req.agentId !== undefined ? findAgent(config, req.agentId)?.approvals : undefined),
    ...(req.senderId || req.senderName || req.channel
      ? {
          party: {
            ...(req.senderId ? { senderId: req.senderId } : {}),
            ...(req.senderName ? { senderName: req.senderName } : {}),
            ...(req.channel ? { channel: req.channel } : {}),
          },
        }
      : {}),
    ...(req.subAgent !== undefined ? { subAgent: subAgentDepth(req.subAgent) } : {}),
  };
  return { ok: true, spec, tools };
}

/** A stored turn's surface shape (what planTurn decided when it opened). */
function shapeOf(spec: TurnSpec): SurfaceShape {
  if (spec.codeModeEngaged) return { kind: "code_mode", languages: spec.options.languages };
  if (spec.toolSearch) return { kind: "tool_search", toolSearch: spec.toolSearch };
  return spec.surface?.kind === "none" ? { kind: "none" } : { kind: "direct" };
}

/**
 * The model-facing surface of an open turn, from its stored spec: what `openTurn` answered, and
 * what `POST /mcp` lists later for the same turn. Fail closed: a surface that is not exactly what
 * the activation allows is never sent.
 */
export function turnSurface(spec: TurnSpec): { ok: true; tools: ModelTool[] } | { ok: false; message: string } {
  const shape = shapeOf(spec);
  const tools = modelSurface(spec.catalog, shape);
  const check = checkSurface(tools, spec.catalog, shape);
  if (!check.ok) return check;
  return { ok: true, tools };
}

/** Runs that intentionally have no tools: `disableTools`, or an empty allow list. */
export function toolsActive(req: OpenTurnRequest): boolean {
  return req.disableTools !== true && !(req.allow !== undefined && req.allow.length === 0);
}

/** What listing the turn's MCP servers found (done by the session object before planning). */
export type McpDiscovery = { servers: StoredMcpServer[]; listed: McpServerTools[] };

/**
 * The turn's MCP servers (gateway `mcp.servers`, then the turn's own), listed in parallel. A
 * server that cannot be listed is attached without tools and reported; a turn server reusing a
 * gateway server's name is refused. `reuse`: the session object's MCP sessions and the listing
 * cache's clock (a server listed within `mcp.toolListTtlMs` is not listed again).
 */
export async function discoverMcp(
  config: GatewayConfig,
  req: OpenTurnRequest,
  env: Readonly<Record<string, unknown>>,
  reuse: McpServersOptions = {},
): Promise<{ ok: true; found: McpDiscovery } | { ok: false; message: string }> {
  const records: McpServerRecord[] = Object.entries(config.mcpServers).map(([name, s]) => ({ name, origin: "gateway" as const, ...s }));
  for (const [name, s] of Object.entries(req.mcpServers ?? {})) {
    if (records.some((r) => r.name === name))
      return { ok: false, message: `mcpServers.${name}: the gateway already attaches an MCP server named ${JSON.stringify(name)}` };
    records.push({ name, origin: "turn", ...s });
  }
  if (records.length === 0 || !toolsActive(req)) return { ok: true, found: { servers: [], listed: [] } };
  const listings = await new McpServers(records, env, { listingTtlMs: config.mcpToolListTtlMs, ...reuse }).listAll();
  const idents = assignMcpNames(
    records.map((r) => r.name),
    "server",
  );
  const servers: StoredMcpServer[] = records.map((r, i) => {
    const l = listings[i]!;
    return { ...r, ident: idents.get(r.name)!, tools: "tools" in l ? l.tools.length : 0, ...("error" in l ? { error: l.error } : {}) };
  });
  const listed: McpServerTools[] = listings.flatMap((l) => ("tools" in l ? [{ name: l.name, tools: l.tools }] : []));
  return { ok: true, found: { servers, listed } };
}

function withoutEnabled<T extends { enabled: boolean }>(options: T): Omit<T, "enabled"> {
  const { enabled: _enabled, ...rest } = options;
  return rest;
}

const utf8 = new TextEncoder();
const jsonBytes = (tools: ModelTool[]) => utf8.encode(JSON.stringify(tools)).length;

/**
 * The size of a turn's model-visible tool definitions (`bytes`, their JSON in UTF-8) beside what
 * exposing the same catalog directly would cost (`directBytes`: every entry and direct-only tool
 * as its own definition, the surface of a turn with code mode off). Catalogs are shared and frozen
 * (CATALOGS), so the direct figure is computed once per catalog.
 */
export type SurfaceSize = { bytes: number; directBytes: number };

const directBytesOf = new WeakMap<CatalogProjection, number>();

export function surfaceSize(catalog: CatalogProjection, tools: ModelTool[]): SurfaceSize {
  let directBytes = directBytesOf.get(catalog);
  if (directBytes === undefined) directBytesOf.set(catalog, (directBytes = jsonBytes(modelSurface(catalog, { kind: "direct" }))));
  return { bytes: jsonBytes(tools), directBytes };
}

function surfaceTelemetry(shape: Exclude<SurfaceShape, { kind: "code_mode" }>, tools: ModelTool[]): SurfaceTelemetry {
  const kind = shape.kind === "tool_search" ? (shape.toolSearch.mode === "code" ? "tool_search_code" : "tool_search_tools") : shape.kind;
  return { kind, tools: tools.length, bytes: jsonBytes(tools) };
}

/** The plugins without Swarm's, one array per plugins array (the catalog cache keys on it). */
const pluginsWithoutSwarm = new WeakMap<readonly ToolPlugin[], readonly ToolPlugin[]>();
function withoutSwarm(plugins: readonly ToolPlugin[]): readonly ToolPlugin[] {
  let kept = pluginsWithoutSwarm.get(plugins);
  if (!kept) pluginsWithoutSwarm.set(plugins, (kept = plugins.filter((p) => p.id !== SWARM_PLUGIN_ID)));
  return kept;
}
