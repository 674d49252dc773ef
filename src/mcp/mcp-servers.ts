import { McpClient, type McpFetch, type McpToolInfo } from "./mcp-client";
import { resolveMcpTarget, type McpConfigOrigin, type McpServerConfig } from "./mcp-config";
import type { McpOutcome } from "./mcp-errors";
import type { McpPromptsGetResult, McpPromptsListResult, McpResourcesListResult, McpResourcesReadResult, McpToolResult } from "./mcp-results";

/**
 * A turn's MCP servers at run time: each operation opens its own client (a Worker cannot reuse
 * one request's I/O in another), runs, and closes. Header values are resolved here, at the
 * moment of use (`env:NAME` only for gateway-configured servers), and never leave this module:
 * they are in no result, message, snapshot, log or guest value.
 */
export type McpServerRecord = { name: string; origin: McpConfigOrigin } & McpServerConfig;

/** How long one listing at turn opening may take, and one call, resource or prompt operation. */
export const MCP_LIST_TIMEOUT_MS = 10_000;
export const MCP_CALL_TIMEOUT_MS = 60_000;

export type McpServerListing = { name: string; tools: McpToolInfo[] } | { name: string; error: string };

export class McpServers {
  constructor(
    private readonly servers: readonly McpServerRecord[],
    private readonly env: Readonly<Record<string, unknown>>,
    private readonly fetcher?: McpFetch,
  ) {}

  has(name: string): boolean {
    return this.servers.some((s) => s.name === name);
  }

  /** Every server's tool list, in parallel; a server that fails is reported, never fatal. */
  async listAll(signal?: AbortSignal): Promise<McpServerListing[]> {
    return Promise.all(
      this.servers.map(async (s): Promise<McpServerListing> => {
        const listed = await this.with(s.name, MCP_LIST_TIMEOUT_MS, signal, (client, opts) => client.listTools(opts));
        if (!listed.ok) return { name: s.name, error: listed.message };
        // A name listed twice is one tool (the first listing wins), so counts match the catalog.
        const seen = new Set<string>();
        return { name: s.name, tools: listed.value.filter((t) => !seen.has(t.name) && seen.add(t.name)) };
      }),
    );
  }

  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    outputSchema?: Record<string, unknown>,
  ): Promise<McpOutcome<McpToolResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, (client, opts) =>
      client.callTool(tool, args, { ...opts, ...(outputSchema ? { outputSchema } : {}) }),
    );
  }

  listResources(server: string, cursor: string | undefined, signal: AbortSignal): Promise<McpOutcome<McpResourcesListResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, (client, opts) => client.listResources(cursor, opts));
  }

  readResource(server: string, uri: string, signal: AbortSignal): Promise<McpOutcome<McpResourcesReadResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, (client, opts) => client.readResource(uri, opts));
  }

  listPrompts(server: string, cursor: string | undefined, signal: AbortSignal): Promise<McpOutcome<McpPromptsListResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, (client, opts) => client.listPrompts(cursor, opts));
  }

  getPrompt(server: string, name: string, args: Record<string, string>, signal: AbortSignal): Promise<McpOutcome<McpPromptsGetResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, (client, opts) => client.getPrompt(name, args, opts));
  }

  private async with<T>(
    server: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    fn: (client: McpClient, opts: { timeoutMs: number; signal?: AbortSignal }) => Promise<McpOutcome<T>>,
  ): Promise<McpOutcome<T>> {
    const record = this.servers.find((s) => s.name === server);
    if (!record) return { ok: false, code: "mcp_invalid_config", message: `MCP server ${JSON.stringify(server)} is not attached to this turn` };
    const target = resolveMcpTarget(record.name, record, this.env, record.origin);
    if (!target.ok) return target;
    // One deadline for the whole operation: connecting spends from the same budget as the call.
    const started = Date.now();
    const opts = { timeoutMs, ...(signal ? { signal } : {}) };
    const connected = await McpClient.connect(target.target, { ...opts, ...(this.fetcher ? { fetch: this.fetcher } : {}) });
    if (!connected.ok) return connected;
    try {
      return await fn(connected.value, { ...opts, timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)) });
    } finally {
      await connected.value.close();
    }
  }
}
