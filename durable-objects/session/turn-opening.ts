import { buildCatalog } from "../../src/catalog";
import type { ClientToolSpec } from "../../src/catalog";
import { resolveActivation, resolveCodeModeOptions, type GatewayConfig } from "../../src/config";
import type { ToolPlugin } from "../../src/tools";
import { checkSurface, modelSurface, type ModelTool } from "../../src/turns";
import type { TurnSpec } from "../../src/turns";

/** A validated `POST …/turns` body (the HTTP layer checks shapes; this decides policy). */
export type OpenTurnRequest = {
  agentId?: string;
  model?: string;
  allow?: string[];
  deny?: string[];
  disableTools?: boolean;
  clientTools?: ClientToolSpec[];
  mcpServers?: Record<string, { url: string; headers?: Record<string, string> }>;
};

/**
 * The seed's activation order: effective tools → allow/deny → activation → surface.
 * Runs that intentionally have no tools (`disableTools`, empty allow list) engage nothing.
 */
export function planTurn(
  config: GatewayConfig,
  plugins: readonly ToolPlugin[],
  req: OpenTurnRequest,
  ids: { turnId: string; tenantId: string; sessionId: string; counterScope: string; now: number },
): { ok: true; spec: TurnSpec; tools: ModelTool[] } | { ok: false; message: string } {
  const toolsActive = req.disableTools !== true && !(req.allow !== undefined && req.allow.length === 0);
  const catalog = toolsActive
    ? buildCatalog({ plugins, clientTools: req.clientTools, policy: { allow: req.allow, deny: req.deny } })
    : { entries: [], direct: [] };
  const activation = resolveActivation(config, { agentId: req.agentId, model: req.model });
  const engaged = toolsActive && activation.engaged;
  const options = resolveCodeModeOptions(config, req.agentId);
  const spec: TurnSpec = {
    turnId: ids.turnId,
    tenantId: ids.tenantId,
    sessionId: ids.sessionId,
    ...(req.agentId !== undefined ? { agentId: req.agentId } : {}),
    ...(req.model !== undefined ? { model: req.model } : {}),
    codeModeEngaged: engaged,
    options,
    catalog,
    counterScope: ids.counterScope,
    createdAt: ids.now,
  };
  // A turn without tools has an empty catalog and code mode off: its surface is empty.
  const surface = turnSurface(spec);
  if (!surface.ok) return surface;
  return { ok: true, spec, tools: surface.tools };
}

/**
 * The model-facing surface of a turn, from its stored spec: what `openTurn` answered, and what
 * `POST /mcp` lists later for the same turn. Fail closed: a surface that is not exactly what
 * the activation allows is never sent.
 */
export function turnSurface(spec: TurnSpec): { ok: true; tools: ModelTool[] } | { ok: false; message: string } {
  const tools = modelSurface(spec.catalog, spec.codeModeEngaged, spec.options.languages);
  const check = checkSurface(tools, spec.catalog, spec.codeModeEngaged);
  if (!check.ok) return check;
  return { ok: true, tools };
}
