import { jsonBytes, McpClient, type McpFetch, type McpListedTools, type McpToolInfo } from "./mcp-client";
import { MAX_MCP_TOOLS_BYTES } from "../limits";
import { resolveMcpTarget, type McpConfigOrigin, type McpServerConfig } from "./mcp-config";
import type { McpOutcome } from "./mcp-errors";
import { serverIdentity } from "./mcp-identity";
import { MCP_LISTINGS, type McpListingCache } from "./mcp-listing-cache";
import type { McpOperationKind, McpSessionPool } from "./mcp-session-pool";
import { maskSentSecrets, maskSentSecretsIn, sentSecretList } from "../observability";
import type { McpPromptsGetResult, McpPromptsListResult, McpResourcesListResult, McpResourcesReadResult, McpToolResult } from "./mcp-results";

/**
 * A turn's MCP servers at run time. With a session pool (the session object's, mcp-session-pool.ts)
 * operations reuse one MCP session per server identity, and listings come from the isolate's
 * listing cache while fresh (mcp-listing-cache.ts); without one, each operation opens its own
 * client, runs, and closes (what a plain Worker must do). Header values are resolved here, at the
 * moment of use (`env:NAME` only for gateway-configured servers), and never leave this module:
 * they are in no result, message, snapshot, log or guest value. A server that echoes a secret
 * header back (in a result, a listing, a resource, a prompt, an error) gets it masked here, where
 * its answer enters the gateway (observability/sent-secrets.ts): the guest, the model, the stream
 * and storage all see `***`.
 */
export type McpServerRecord = { name: string; origin: McpConfigOrigin } & McpServerConfig;

/** How long one listing at turn opening may take, and one call, resource or prompt operation. */
export const MCP_LIST_TIMEOUT_MS = 10_000;
export const MCP_CALL_TIMEOUT_MS = 60_000;

/** How long a cached tool listing serves new turns when config does not say (`mcp.toolListTtlMs`). */
export const MCP_TOOL_LIST_TTL_MS = 300_000;

export type McpServerListing = { name: string; tools: McpToolInfo[] } | { name: string; error: string };

/**
 * `pool`: reuse sessions (else one client per operation). `listings`, `now`, `listingTtlMs`: the
 * listing cache, the clock its TTL is read by (the session object's, injectable), the TTL (0: never
 * cache). `fetch`: for tests that observe requests (one-client-per-operation mode only).
 */
export type McpServersOptions = {
  pool?: McpSessionPool;
  listings?: McpListingCache;
  now?: () => number;
  listingTtlMs?: number;
  fetch?: McpFetch;
};

export class McpServers {
  constructor(
    private readonly servers: readonly McpServerRecord[],
    private readonly env: Readonly<Record<string, unknown>>,
    private readonly options: McpServersOptions = {},
  ) {}

  has(name: string): boolean {
    return this.servers.some((s) => s.name === name);
  }

  /**
   * Every server's tool list, in parallel; a server that fails is reported, never fatal. Their
   * tools share one budget of MAX_MCP_TOOLS_BYTES (the turn stores them in one row), spent in
   * server order: a server whose tools would pass it is reported instead, so which one is does
   * not depend on which answered first.
   */
  async listAll(signal?: AbortSignal): Promise<McpServerListing[]> {
    const listings = await Promise.all(
      this.servers.map(async (s) => ({
        name: s.name,
        listed: await this.listed(s.name, signal),
      })),
    );
    let spent = 0;
    return listings.map(({ name, listed }): McpServerListing => {
      if (!listed.ok) return { name, error: listed.message };
      const { tools, bytes } = deduplicated(listed.value.tools);
      if (spent + bytes > MAX_MCP_TOOLS_BYTES) {
        return {
          name,
          error: `MCP server "${name}": tools/list refused: its tools (${bytes} bytes of JSON) would bring this turn's MCP tools to ${spent + bytes} bytes, over the bound of ${MAX_MCP_TOOLS_BYTES} per turn`,
        };
      }
      spent += bytes;
      return { name, tools };
    });
  }

  /** One server's tools: the cached listing while fresh, else `tools/list` (cached when it succeeds). */
  private listed(server: string, signal: AbortSignal | undefined): Promise<McpOutcome<McpListedTools>> {
    const ttl = this.options.listingTtlMs ?? MCP_TOOL_LIST_TTL_MS;
    const cache = this.options.pool && ttl > 0 ? (this.options.listings ?? MCP_LISTINGS) : undefined;
    const now = this.options.now ?? Date.now;
    return this.with(server, MCP_LIST_TIMEOUT_MS, signal, "read", (client, opts) => client.listTools(opts), {
      before: (key) => {
        const hit = cache?.get(key, now(), ttl);
        return hit ? { ok: true, value: hit } : undefined;
      },
      mark: () => cache?.mark(),
      after: (key, value, startedAt, mark) => cache?.set(key, value, startedAt, mark),
    });
  }

  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    outputSchema?: Record<string, unknown>,
  ): Promise<McpOutcome<McpToolResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, "call", (client, opts) =>
      client.callTool(tool, args, { ...opts, ...(outputSchema ? { outputSchema } : {}) }),
    );
  }

  listResources(server: string, cursor: string | undefined, signal: AbortSignal): Promise<McpOutcome<McpResourcesListResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, "read", (client, opts) => client.listResources(cursor, opts));
  }

  readResource(server: string, uri: string, signal: AbortSignal): Promise<McpOutcome<McpResourcesReadResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, "read", (client, opts) => client.readResource(uri, opts));
  }

  listPrompts(server: string, cursor: string | undefined, signal: AbortSignal): Promise<McpOutcome<McpPromptsListResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, "read", (client, opts) => client.listPrompts(cursor, opts));
  }

  getPrompt(server: string, name: string, args: Record<string, string>, signal: AbortSignal): Promise<McpOutcome<McpPromptsGetResult>> {
    return this.with(server, MCP_CALL_TIMEOUT_MS, signal, "read", (client, opts) => client.getPrompt(name, args, opts));
  }

  private async with<T>(
    server: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    kind: McpOperationKind,
    fn: (client: McpClient, opts: { timeoutMs: number; signal?: AbortSignal }) => Promise<McpOutcome<T>>,
    cached?: {
      before: (key: string) => McpOutcome<T> | undefined;
      mark: () => number | undefined;
      after: (key: string, value: T, startedAt: number, mark: number | undefined) => void;
    },
  ): Promise<McpOutcome<T>> {
    const record = this.servers.find((s) => s.name === server);
    if (!record) return { ok: false, code: "mcp_invalid_config", message: `MCP server ${JSON.stringify(server)} is not attached to this turn` };
    const target = resolveMcpTarget(record.name, record, this.env, record.origin);
    if (!target.ok) return target;
    const opts = { timeoutMs, ...(signal ? { signal } : {}) };
    const secretValues = secretHeaderValues(record, target.target.headers);
    const secrets = sentSecretList(secretValues);
    const masked = (r: McpOutcome<T>): McpOutcome<T> =>
      r.ok ? { ok: true, value: maskSentSecretsIn(r.value, secrets) } : { ...r, message: maskSentSecrets(r.message, secrets) };
    const pool = this.options.pool;
    if (!pool) {
      // One deadline for the whole operation: connecting spends from the same budget as the call.
      const started = Date.now();
      const connected = await McpClient.connect(target.target, { ...opts, ...(this.options.fetch ? { fetch: this.options.fetch } : {}) });
      if (!connected.ok) return masked(connected);
      try {
        return masked(await fn(connected.value, { ...opts, timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)) }));
      } finally {
        await connected.value.close();
      }
    }
    const key = await serverIdentity(target.target, secretValues);
    const hit = cached?.before(key);
    if (hit) return hit;
    const startedAt = this.options.now?.() ?? Date.now();
    const mark = cached?.mark();
    const r = masked(await pool.run(key, target.target, kind, opts, fn));
    // Cached masked: what the cache holds is what turns may store and show.
    if (r.ok) cached?.after(key, r.value, startedAt, mark);
    return r;
  }
}

/**
 * The header values sent to a server that are secrets: every `env:` reference of a gateway server
 * (its literal values are the operator's settings), every value of a turn's own server (the
 * caller's credentials, which the gateway sends on its behalf).
 */
function secretHeaderValues(record: McpServerRecord, resolved: Readonly<Record<string, string>>): string[] {
  return Object.entries(record.headers ?? {})
    .filter(([, raw]) => record.origin === "turn" || raw.startsWith("env:"))
    .flatMap(([name]) => (resolved[name] !== undefined ? [resolved[name]] : []));
}

/** What a listing adds to a turn, per listed array: a cached listing is measured once, and keeps one identity (src/catalog/catalog-cache.ts). */
const measured = new WeakMap<readonly McpToolInfo[], { tools: McpToolInfo[]; bytes: number }>();

/** A name listed twice is one tool (the first listing wins), so counts match the catalog; with its JSON bytes. */
function deduplicated(listed: readonly McpToolInfo[]): { tools: McpToolInfo[]; bytes: number } {
  let out = measured.get(listed);
  if (!out) {
    const seen = new Set<string>();
    const tools = listed.filter((t) => !seen.has(t.name) && seen.add(t.name));
    out = { tools, bytes: tools.reduce((n, t) => n + jsonBytes(t), 0) };
    measured.set(listed, out);
  }
  return out;
}
