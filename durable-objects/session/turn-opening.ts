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
  const tools = toolsActive ? modelSurface(catalog, engaged, options.languages) : [];
  // Fail closed: a surface that is not exactly what the activation allows is never sent.
  const check = checkSurface(tools, catalog, engaged);
  if (!check.ok) return check;
  return { ok: true, spec, tools };
}
