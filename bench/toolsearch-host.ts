/**
 * Bench-only: the parent side of seed 004's Node-child Tool Search design, for the baseline of
 * section 6 (bench/harness/baselines-toolsearch.ts). Built for Node by the harness with esbuild,
 * once, outside any timing, and imported by the bench process: it answers a child's
 * `openclaw.tools.search / describe / call` from an in-process copy of the same 500-tool catalog
 * the bench gateway serves, with the repo's own code (ToolSearchCatalog over SearchIndex, the
 * same limits, executeTool's validation → execute → output check), so both sides search,
 * describe and call alike; only where the JavaScript body runs and how its bridge travels differ.
 */
import { buildCatalog } from "../src/catalog";
import { TOOL_SEARCH_DEFAULTS } from "../src/config";
import { searchLimit, ToolSearchCatalog } from "../src/tool-search";
import { executeTool, type SessionStore, type ToolDefinition } from "../src/tools";
import { largeCatalogPlugin } from "../test/support/large-catalog";

export type BridgeAnswer = { ok: true; value: unknown } | { ok: false; message: string };

export interface ToolSearchHost {
  size: number;
  handle(op: string, args: unknown[]): Promise<BridgeAnswer>;
}

function memoryStore(): SessionStore {
  const data = new Map<string, unknown>();
  return {
    get: async (key) => data.get(key),
    put: async (key, value) => void data.set(key, value),
    delete: async (key) => data.delete(key),
    list: async (prefix, limit) =>
      [...data.entries()]
        .filter(([k]) => k.startsWith(prefix))
        .slice(0, limit)
        .map(([key, value]) => ({ key, value })),
  };
}

export function createToolSearchHost(size: number): ToolSearchHost {
  const plugin = largeCatalogPlugin(size);
  const catalog = new ToolSearchCatalog(buildCatalog({ plugins: [plugin], policy: {} }));
  const definitions = new Map<string, ToolDefinition>(plugin.tools.map((t) => [t.name, t]));
  const ctx = { signal: new AbortController().signal, tenantId: "bench", sessionId: "node-child", turnId: "node-child", store: memoryStore() };
  const limits = { searchDefaultLimit: TOOL_SEARCH_DEFAULTS.searchDefaultLimit, maxSearchLimit: TOOL_SEARCH_DEFAULTS.maxSearchLimit };
  return {
    size: catalog.size,
    async handle(op, args) {
      if (op === "search") {
        const [query, options] = args as [unknown, { limit?: unknown } | undefined];
        if (typeof query !== "string") return { ok: false, message: "openclaw.tools.search query must be a string" };
        const limit = typeof options?.limit === "number" && Number.isFinite(options.limit) ? options.limit : null;
        return { ok: true, value: catalog.search(query, searchLimit(limit, limits)) };
      }
      const entry = typeof args[0] === "string" ? catalog.lookup(args[0]) : undefined;
      if (!entry) return { ok: false, message: `unknown tool id ${JSON.stringify(args[0])}` };
      if (op === "describe") return { ok: true, value: catalog.describe(entry) };
      if (op === "call") {
        const definition = definitions.get(entry.toolName);
        if (!definition) return { ok: false, message: `tool ${entry.toolName} has no implementation` };
        const outcome = await executeTool(definition, args[1], ctx);
        return outcome.ok ? { ok: true, value: outcome.details } : outcome;
      }
      return { ok: false, message: `unknown bridge operation ${op}` };
    },
  };
}
