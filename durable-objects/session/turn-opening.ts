import { buildCatalog } from "../../src/catalog";
import type { ClientToolSpec } from "../../src/catalog";
import { planSurface, resolveActivation, resolveCodeModeOptions, type GatewayConfig } from "../../src/config";
import type { ToolPlugin } from "../../src/tools";
import { checkSurface, modelSurface, type ModelTool, type SurfaceShape } from "../../src/turns";
import type { TurnSpec } from "../../src/turns";
import type { SurfaceTelemetry } from "../../src/code-mode";

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
 * The seed's activation order: effective tools → allow/deny → activation → surface (code mode,
 * else Tool Search, else direct tools). Runs that intentionally have no tools (`disableTools`,
 * empty allow list) engage nothing. `sandboxStarts`: whether a QuickJS VM can start in this
 * isolate (Tool Search's `"code"` mode falls back to `"tools"` before compaction when it cannot;
 * code mode never falls back — its cells fail with `runtime_unavailable`).
 */
export function planTurn(
  config: GatewayConfig,
  plugins: readonly ToolPlugin[],
  req: OpenTurnRequest,
  ids: { turnId: string; tenantId: string; sessionId: string; counterScope: string; now: number },
  sandboxStarts = true,
): { ok: true; spec: TurnSpec; tools: ModelTool[] } | { ok: false; message: string } {
  const toolsActive = req.disableTools !== true && !(req.allow !== undefined && req.allow.length === 0);
  const catalog = toolsActive
    ? buildCatalog({ plugins, clientTools: req.clientTools, policy: { allow: req.allow, deny: req.deny } })
    : { entries: [], direct: [] };
  const activation = resolveActivation(config, { agentId: req.agentId, model: req.model });
  const engaged = toolsActive && activation.engaged;
  const options = resolveCodeModeOptions(config, req.agentId);
  const plan = planSurface(config, { agentId: req.agentId, model: req.model, toolsActive, codeModeEngaged: engaged, sandboxStarts });
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
    counterScope: ids.counterScope,
    createdAt: ids.now,
  };
  return { ok: true, spec, tools };
}

function withoutEnabled<T extends { enabled: boolean }>(options: T): Omit<T, "enabled"> {
  const { enabled: _enabled, ...rest } = options;
  return rest;
}

const utf8 = new TextEncoder();

function surfaceTelemetry(shape: Exclude<SurfaceShape, { kind: "code_mode" }>, tools: ModelTool[]): SurfaceTelemetry {
  const kind = shape.kind === "tool_search" ? (shape.toolSearch.mode === "code" ? "tool_search_code" : "tool_search_tools") : shape.kind;
  return { kind, tools: tools.length, bytes: utf8.encode(JSON.stringify(tools)).length };
}
