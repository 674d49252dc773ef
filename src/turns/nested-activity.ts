import type { Settlement, ToolRequest } from "../bridge";
import type { Catalog } from "../catalog";

/**
 * One completed nested tool call of a cell (seed 002, "Nested tool execution"): what the
 * trajectory shows under the outer `exec`/`wait` that started it. Display-only: it never
 * becomes a model message, and its input and result are stored redacted and bounded.
 */
export type NestedCall = {
  /** The bridge's invocation id (`call_<n>_<random>`), as pendingToolCalls shows client calls. */
  invocationId: string;
  /** The tool's own name (`MCP.<server>.<tool>` / `MCP.<server>.<op>` for MCP). */
  tool: string;
  source: "openclaw" | "mcp" | "client";
  /** MCP results come from the network: the model sees them wrapped as untrusted. */
  networkDerived: boolean;
  ok: boolean;
  startedAt: number;
  durationMs: number;
  input: unknown;
  /** The settled JSON text (ok) or the error message. */
  result?: string;
  error?: string;
};

export type ActivitySink = (call: NestedCall) => void;

export function nestedCall(catalog: Catalog, request: ToolRequest, settlement: Settlement, startedAt: number, endedAt: number): NestedCall {
  const named = nestedName(catalog, request.tool);
  return {
    invocationId: request.callId ?? `call_${request.id}`,
    ...named,
    networkDerived: named.source === "mcp",
    ok: settlement.ok,
    startedAt,
    durationMs: Math.max(0, endedAt - startedAt),
    input: request.input,
    ...(settlement.ok ? { result: settlement.text ?? "null" } : { error: settlement.message }),
  };
}

function nestedName(catalog: Catalog, tool: string): { tool: string; source: NestedCall["source"] } {
  if (tool.startsWith("mcp:")) {
    const entry = catalog.lookupMcp(tool);
    if (entry?.mcp) return { tool: `MCP.${entry.mcp.serverIdent}.${entry.mcp.toolIdent}`, source: "mcp" };
    return { tool: `MCP.${tool.slice(4).replace("/", ".")}`, source: "mcp" };
  }
  const entry = catalog.lookup(tool);
  return { tool: entry?.toolName ?? tool, source: entry?.source ?? "openclaw" };
}
