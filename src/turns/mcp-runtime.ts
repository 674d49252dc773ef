import type { Settlement } from "../bridge";
import type { Catalog, CatalogEntry } from "../catalog";
import { boundedResult } from "../code-mode";
import { apiHeader, boundedApiHeader, buildApiFiles, type ApiFileTable, type McpDeclaredServer, type McpServers } from "../mcp";
import type { ToolDefinition } from "../tools";
import type { StoredMcpServer, TurnSpec } from "./turn-spec";

/**
 * A turn's MCP side at run time (seed 002 "Tool catalog", "Declared output contracts"): the
 * `MCP.<server>` namespace and virtual `.d.ts` files the guest gets, built from the visible
 * (policy-filtered) MCP entries of the catalog; the server operations behind `MCP.<s>.$api`,
 * `resources.*` and `prompts.*`; and the executor definition of an MCP tool, so its calls take
 * the same path as every other tool (input checked against its schema, bounded result).
 */

/** A server's resource and prompt operations, as policy (allow/deny, approvals) names them after `<server>__`. */
export const MCP_SERVER_OPS = ["resources.list", "resources.read", "prompts.list", "prompts.get"] as const;

/** A server is visible to the guest (`MCP.<server>`, its `.d.ts`) when the policy leaves it a tool or an operation. */
function serverVisible(s: StoredMcpServer, visibleTools: number): boolean {
  return visibleTools > 0 || s.ops === undefined || s.ops.length > 0;
}

export type McpRuntime = { declared: McpDeclaredServer[]; files: ApiFileTable; guestJson?: string };

export function mcpRuntime(spec: TurnSpec, catalog: Catalog): McpRuntime {
  const servers = spec.mcp?.servers ?? [];
  if (servers.length === 0) return { declared: [], files: new Map() };
  const visible = catalog.mcpServers();
  const declared: McpDeclaredServer[] = servers
    .filter((s) => serverVisible(s, (visible.get(s.name) ?? []).length))
    .map((s) => ({
      name: s.ident,
      mcpName: s.name,
      tools: (visible.get(s.name) ?? []).map((e) => ({
        name: e.mcp!.toolIdent,
        mcpName: e.mcp!.tool,
        ...(e.description ? { description: e.description } : {}),
        inputSchema: e.parameters,
        ...(e.mcp!.outputSchema ? { outputSchema: e.mcp!.outputSchema } : {}),
      })),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files = buildApiFiles(declared);
  const guestJson = JSON.stringify({
    servers: declared.map((d) => ({ name: d.name, tools: d.tools.map((t) => t.name) })),
    files: [...files.values()],
  });
  return { declared, files, guestJson };
}

/** An MCP catalog entry as an executor definition: the call goes to its server through `servers`. */
export function mcpToolDefinition(entry: CatalogEntry, servers: McpServers): ToolDefinition {
  const mcp = entry.mcp!;
  return {
    name: `MCP.${mcp.serverIdent}.${mcp.toolIdent}`,
    catalogName: entry.toolName,
    networkDerived: true,
    description: entry.description,
    parameters: entry.parameters,
    execute: async (input, ctx) => {
      const r = await servers.callTool(
        mcp.server,
        mcp.tool,
        input as Record<string, unknown>,
        ctx.signal,
        mcp.outputSchema as Record<string, unknown> | undefined,
      );
      if (!r.ok) throw new Error(r.message);
      return r.value;
    },
  };
}

const OPS = ["$api", "resources/list", "resources/read", "prompts/list", "prompts/get"] as const;

/** The turn an MCP server operation runs for: its spec, its servers as the guest sees them, and its output bound. */
export type McpOpTurn = { spec: TurnSpec; runtime: McpRuntime; servers: McpServers; maxBytes: number };

/** `MCP.<server>.$api/resources/prompts`: `mcp:<ident>/<op>` keys from the guest. */
export async function mcpServerOp(turn: McpOpTurn, key: string, input: unknown, signal: AbortSignal): Promise<Settlement> {
  const { spec, runtime, servers, maxBytes } = turn;
  const slash = key.indexOf("/");
  const ident = key.slice(4, slash);
  const op = key.slice(slash + 1) as (typeof OPS)[number];
  const record = spec.mcp?.servers.find((s) => s.ident === ident);
  // Denied operations and servers the guest cannot see answer like unknown ones: existence is not revealed.
  const denied = op !== "$api" && record?.ops !== undefined && !record.ops.includes(op.replace("/", "."));
  if (!record || !OPS.includes(op) || denied || !runtime.declared.some((d) => d.name === ident))
    return { ok: false, message: `${key.slice(4) || "MCP"} is not an available MCP operation` };
  const args = (input ?? {}) as Record<string, unknown>;
  if (typeof args !== "object" || Array.isArray(args))
    return { ok: false, message: `MCP.${ident}.${op.replace("/", ".")} takes one object argument` };
  const bounded = (value: unknown): Settlement => boundedResult(`MCP.${ident}.${op.replace("/", ".")}`, value, maxBytes, false);
  const cursor = (): string | undefined | false =>
    args.cursor === undefined || args.cursor === null ? undefined : typeof args.cursor === "string" ? args.cursor : false;
  switch (op) {
    case "$api": {
      const declared = runtime.declared.find((d) => d.name === ident)!;
      const r = apiHeader(declared, typeof args.toolName === "string" ? args.toolName : undefined, { schema: args.schema === true });
      // Its declared shape, bounded in its own terms (never the generic truncation marker).
      return r.ok ? { ok: true, text: JSON.stringify(boundedApiHeader(r.value, maxBytes)) } : { ok: false, message: r.message };
    }
    case "resources/list":
    case "prompts/list": {
      const c = cursor();
      if (c === false) return { ok: false, message: `MCP.${ident}.${op.replace("/", ".")}: cursor must be a string` };
      const r = op === "resources/list" ? await servers.listResources(record.name, c, signal) : await servers.listPrompts(record.name, c, signal);
      return r.ok ? bounded(r.value) : { ok: false, message: r.message };
    }
    case "resources/read": {
      if (typeof args.uri !== "string" || args.uri === "") return { ok: false, message: `MCP.${ident}.resources.read needs { uri }` };
      const r = await servers.readResource(record.name, args.uri, signal);
      return r.ok ? bounded(r.value) : { ok: false, message: r.message };
    }
    case "prompts/get": {
      if (typeof args.name !== "string" || args.name === "") return { ok: false, message: `MCP.${ident}.prompts.get needs { name, arguments? }` };
      const a = args.arguments ?? {};
      if (typeof a !== "object" || a === null || Array.isArray(a) || Object.values(a).some((v) => typeof v !== "string")) {
        return { ok: false, message: `MCP.${ident}.prompts.get: arguments must be an object of strings` };
      }
      const r = await servers.getPrompt(record.name, args.name, a as Record<string, string>, signal);
      return r.ok ? bounded(r.value) : { ok: false, message: r.message };
    }
  }
}

/**
 * A server operation other than `$api` (which only reads the turn's own declarations) as an
 * executor definition, so `resources.*` and `prompts.*` pass the same hooks and approvals as tool
 * calls. Policy names are `<server>__resources.list`, `<server>__resources.read`,
 * `<server>__prompts.list`, `<server>__prompts.get`: an approval rule `everything__*` covers them
 * with the server's tools, `*__resources.read` every server's resource reads. Arguments are
 * checked by the operation itself (its messages name `MCP.<server>.<op>`).
 */
export function mcpOpDefinition(spec: TurnSpec, runtime: McpRuntime, servers: McpServers, key: string, maxBytes: number): ToolDefinition | undefined {
  const slash = key.indexOf("/");
  const ident = key.slice(4, slash);
  const op = key.slice(slash + 1);
  const record = spec.mcp?.servers.find((s) => s.ident === ident);
  if (!record || op === "$api" || !(OPS as readonly string[]).includes(op)) return undefined;
  // Not allowed by the turn's policy: mcpServerOp answers it as unknown (no hooks, no approval asked).
  if (record.ops !== undefined && !record.ops.includes(op.replace("/", "."))) return undefined;
  const dotted = op.replace("/", ".");
  return {
    name: `MCP.${ident}.${dotted}`,
    catalogName: `${record.name}__${dotted}`,
    networkDerived: true,
    description: `MCP ${dotted} of server ${record.name}`,
    parameters: { type: "object" },
    execute: async (input, ctx) => {
      const r = await mcpServerOp({ spec, runtime, servers, maxBytes }, key, input, ctx.signal);
      if (!r.ok) throw new Error(r.message);
      return r.text === undefined ? null : (JSON.parse(r.text) as unknown);
    },
  };
}
