import type { Settlement, ToolRequest } from "../bridge";
import type { Catalog, CatalogEntry } from "../catalog";

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
  /** The name is not in the turn's catalog (unknown, or denied by allow/deny policy: not told apart). */
  denied?: boolean;
  /** The settled JSON text (ok) or the error message. */
  result?: string;
  error?: string;
  /** Swarm: the phase (`phase(name)`) the cell was in when it made the call. */
  phase?: { id: number; name: string };
};

export type ActivitySink = (call: NestedCall) => void;

export function nestedCall(
  catalog: Catalog,
  request: ToolRequest,
  settlement: Settlement,
  startedAt: number,
  endedAt: number,
  definitionOf?: (entry: CatalogEntry) => { networkDerived?: boolean } | undefined,
): NestedCall {
  const named = nestedName(catalog, request.tool, definitionOf);
  return {
    invocationId: request.callId ?? `call_${request.id}`,
    ...named,
    networkDerived: named.source === "mcp" || named.networkDerived === true,
    ...(named.known ? {} : { denied: true }),
    ok: settlement.ok,
    startedAt,
    durationMs: Math.max(0, endedAt - startedAt),
    input: request.input,
    ...(settlement.ok ? { result: settlement.text ?? "null" } : { error: settlement.message }),
    ...(request.phase ? { phase: request.phase } : {}),
  };
}

type Named = { tool: string; source: NestedCall["source"]; known: boolean; networkDerived?: boolean };

function nestedName(catalog: Catalog, tool: string, definitionOf?: (entry: CatalogEntry) => { networkDerived?: boolean } | undefined): Named {
  if (tool.startsWith("mcp:")) {
    const entry = catalog.lookupMcp(tool);
    if (entry?.mcp) return { tool: `MCP.${entry.mcp.serverIdent}.${entry.mcp.toolIdent}`, source: "mcp", known: true };
    // Server operations (resources, prompts, $api) are known when the server is; unknown names say so in their error.
    return { tool: `MCP.${tool.slice(4).replace("/", ".")}`, source: "mcp", known: tool.includes("/") };
  }
  // Swarm's phase() and log(): records under their own names (their input is what the trajectory shows).
  if (tool === "swarm:phase" || tool === "swarm:log") return { tool: tool.slice(6), source: "openclaw", known: true };
  // A namespace method's call is its tool's call: recorded under the tool's name.
  const entry = tool.startsWith("ns:") ? catalog.lookupNamespace(tool)?.entry : catalog.lookup(tool);
  if (!entry) return { tool: tool.startsWith("ns:") ? tool.slice(3) : tool, source: "openclaw", known: false };
  // A plugin tool that declares network-derived output is wrapped like MCP results.
  return { tool: entry.toolName, source: entry.source, known: true, networkDerived: definitionOf?.(entry)?.networkDerived === true };
}
