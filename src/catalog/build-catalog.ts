import type { ToolPlugin } from "../tools";
import { assignCallableNames } from "./callable-names";
import { opaqueToolId } from "./opaque-id";
import { isToolAllowed, type ToolPolicy } from "./tool-policy";
import type { CatalogEntry, CatalogProjection, ClientToolSpec, McpServerTools, NamespaceEntry, ToolOrigin } from "./types";
import { assignMcpNames } from "../mcp";

/** The code-mode and Tool Search control tools (seed "Tool catalog"); a client tool may not take these names. */
export const CODE_MODE_CONTROL_TOOLS: readonly string[] = ["exec", "wait", "tool_search_code", "tool_search", "tool_describe", "tool_call"];
/** Control tools never enter the catalog (the shell-style `exec` of a plugin does). */
export const CONTROL_TOOL_NAMES = new Set(CODE_MODE_CONTROL_TOOLS.filter((n) => n !== "exec"));
const ORIGIN_ORDER: Record<ToolOrigin, number> = { core: 0, bundled: 1, external: 2, mcp: 3, client: 4 };

export type CatalogInput = {
  plugins: readonly ToolPlugin[];
  /** Tools listed by the turn's MCP servers (servers that could not be listed are absent). */
  mcpServers?: readonly McpServerTools[];
  clientTools?: readonly ClientToolSpec[];
  policy: ToolPolicy;
};

/** An MCP tool's catalog name (what allow/deny patterns and Tool Search see): `<server>__<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}__${tool}`;
}

/** The guest's key for an MCP tool (never a bare global): `mcp:<server>.<tool>` in guest identifiers. */
export function mcpGuestKey(serverIdent: string, toolIdent: string): string {
  return `mcp:${serverIdent}.${toolIdent}`;
}

/**
 * The run-scoped catalog: effective tools after policy, one winner per exact tool name
 * (later sources win an exact-name shadow, as in direct mode), in the seed's order:
 * core, bundled plugins, external plugins, MCP, client tools.
 */
export function buildCatalog(input: CatalogInput): CatalogProjection {
  const candidates: Omit<CatalogEntry, "callableName">[] = [];
  const plugins = [...input.plugins].sort((a, b) => ORIGIN_ORDER[a.origin] - ORIGIN_ORDER[b.origin]);
  for (const plugin of plugins) {
    for (const tool of plugin.tools) {
      candidates.push({
        id: opaqueToolId(plugin.origin, plugin.id, tool.name),
        toolName: tool.name,
        origin: plugin.origin,
        source: "openclaw",
        pluginId: plugin.id,
        ...(tool.label ? { label: tool.label } : {}),
        description: tool.description,
        parameters: tool.parameters,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
        directOnly: tool.directOnly === true,
      });
    }
  }
  // Guest identifiers come from every listed name (before policy), so denying one tool never renames another.
  const serverIdents = assignMcpNames(
    (input.mcpServers ?? []).map((s) => s.name),
    "server",
  );
  for (const server of input.mcpServers ?? []) {
    const toolIdents = assignMcpNames(
      server.tools.map((t) => t.name),
      "tool",
    );
    for (const tool of server.tools) {
      candidates.push({
        id: opaqueToolId("mcp", server.name, tool.name),
        toolName: mcpToolName(server.name, tool.name),
        origin: "mcp",
        source: "mcp",
        // Untrusted: shown in the .d.ts and Tool Search results, never in a code-mode surface.
        description: tool.description ?? "",
        parameters: tool.inputSchema,
        directOnly: false,
        mcp: {
          server: server.name,
          serverIdent: serverIdents.get(server.name)!,
          tool: tool.name,
          toolIdent: toolIdents.get(tool.name)!,
          ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
        },
      });
    }
  }
  for (const client of input.clientTools ?? []) {
    candidates.push({
      id: opaqueToolId("client", "", client.name),
      toolName: client.name,
      origin: "client",
      source: "client",
      description: client.description ?? "",
      // Untrusted: kept for describe() and enforced on calls, never promoted to hints.
      parameters: client.parameters ?? { type: "object" },
      // Enforced when the client's result arrives; never a trusted output hint (seed).
      ...(client.outputSchema ? { clientOutputSchema: client.outputSchema } : {}),
      directOnly: false,
    });
  }

  // One effective winner per exact name: a later client tool shadows (as in direct mode);
  // between plugins the first registration stands (conflicts are refused at start-up).
  const winners = new Map<string, Omit<CatalogEntry, "callableName">>();
  for (const c of candidates) {
    if (CONTROL_TOOL_NAMES.has(c.toolName)) continue;
    if (c.toolName === "exec" && c.origin === "client") continue; // refused at the edge; never shadows the control tool
    if (!isToolAllowed(input.policy, c.toolName)) continue;
    if (winners.has(c.toolName) && c.origin !== "client") continue;
    winners.delete(c.toolName);
    winners.set(c.toolName, c);
  }
  const ordered = [...winners.values()].sort((a, b) => ORIGIN_ORDER[a.origin] - ORIGIN_ORDER[b.origin]);
  const cataloged = ordered.filter((c) => !c.directOnly);
  // MCP tools never become bare globals: they take no callable name from anyone. Every
  // registered namespace name is reserved, visible or not, so hiding a namespace never renames a tool.
  const reserved = plugins.flatMap((p) => (p.namespaces ?? []).map((n) => n.name));
  const names = assignCallableNames(
    cataloged.filter((c) => !c.mcp),
    reserved,
  );
  const namespaces = visibleNamespaces(plugins, winners);
  return {
    entries: cataloged.map((c) => ({ ...c, callableName: c.mcp ? mcpGuestKey(c.mcp.serverIdent, c.mcp.toolIdent) : names.get(c.id)! })),
    direct: ordered.filter((c) => c.directOnly).map((c) => ({ ...c, callableName: c.toolName })),
    ...(namespaces.length > 0 ? { namespaces } : {}),
  };
}

/**
 * A plugin's namespace appears only when every tool it requires is an effective tool of this turn
 * (after allow/deny) and still that plugin's: a client tool shadowing one of them, or another
 * plugin's tool of the same name, hides it (seed 000 "Propriedade e visibilidade").
 */
function visibleNamespaces(plugins: readonly ToolPlugin[], winners: ReadonlyMap<string, { pluginId?: string }>): NamespaceEntry[] {
  const out: NamespaceEntry[] = [];
  for (const plugin of plugins) {
    for (const ns of plugin.namespaces ?? []) {
      if (!ns.requiredTools.every((t) => winners.get(t)?.pluginId === plugin.id)) continue;
      out.push({
        name: ns.name,
        pluginId: plugin.id,
        methods: ns.methods.map((m) => ({ name: m.name, toolName: m.tool })),
        ...(ns.description ? { description: ns.description } : {}),
      });
    }
  }
  return out;
}
