import { inputHint, outputHint } from "./schema-hints";
import { SearchIndex } from "./search-index";
import type { CatalogEntry, CatalogProjection, NamespaceEntry, ToolCatalogMetadata } from "./types";

const clientNames = new WeakMap<CatalogProjection, ReadonlySet<string>>();

/**
 * A turn's catalog at run time: lookup by callable name (the only key the guest has),
 * guest metadata, search. Built from the stored projection; never sees ids leave.
 */
export class Catalog {
  private callables?: Map<string, CatalogEntry>;
  private index?: SearchIndex;

  constructor(readonly projection: CatalogProjection) {}

  /** Built on first use: most calls of a turn never look a callable name up. */
  private get byCallable(): Map<string, CatalogEntry> {
    if (!this.callables) {
      this.callables = new Map();
      for (const e of this.projection.entries) this.callables.set(e.callableName, e);
    }
    return this.callables;
  }

  /** The client tool of this exact name (the tool's own name, as the caller declared it). */
  clientTool(name: string): CatalogEntry | undefined {
    return this.projection.entries.find((e) => e.source === "client" && e.toolName === name);
  }

  /** The names of the turn's client tools (per projection: a turn's catalog never changes). */
  clientToolNames(): ReadonlySet<string> {
    let names = clientNames.get(this.projection);
    if (!names) {
      names = new Set(this.projection.entries.filter((e) => e.source === "client").map((e) => e.toolName));
      clientNames.set(this.projection, names);
    }
    return names;
  }

  /** Entries the guest may see generically (MCP lives only under `MCP`). */
  get guestEntries(): CatalogEntry[] {
    return this.projection.entries.filter((e) => e.source !== "mcp");
  }

  lookup(callableName: string): CatalogEntry | undefined {
    const e = this.byCallable.get(callableName);
    return e && e.source !== "mcp" ? e : undefined;
  }

  /** An MCP tool by its guest key (`mcp:<server>.<tool>`, see build-catalog.ts). */
  lookupMcp(key: string): CatalogEntry | undefined {
    const e = this.byCallable.get(key);
    return e && e.source === "mcp" ? e : undefined;
  }

  /** The turn's visible plugin namespaces. */
  get namespaces(): readonly NamespaceEntry[] {
    return this.projection.namespaces ?? [];
  }

  /**
   * A namespace method by its guest key `ns:<Name>.<method>` (the prelude's installNamespaces; never a bare global or an MCP key): the catalog
   * entry it calls, which must still be the namespace's plugin's own tool. Anything else (an
   * undeclared method, a protocol name, a namespace this turn does not show) is no call.
   */
  lookupNamespace(key: string): { path: string; entry: CatalogEntry } | undefined {
    if (!key.startsWith("ns:")) return undefined;
    const dot = key.indexOf(".", 3);
    if (dot < 0) return undefined;
    const name = key.slice(3, dot);
    const method = key.slice(dot + 1);
    const ns = this.namespaces.find((n) => n.name === name);
    const bound = ns?.methods.find((m) => m.name === method);
    if (!ns || !bound) return undefined;
    const entry = this.projection.entries.find((e) => e.toolName === bound.toolName);
    if (!entry || entry.pluginId !== ns.pluginId) return undefined;
    return { path: `${name}.${method}`, entry };
  }

  /** The visible MCP tools, grouped by server in catalog order. */
  mcpServers(): Map<string, CatalogEntry[]> {
    const out = new Map<string, CatalogEntry[]>();
    for (const e of this.projection.entries) {
      if (!e.mcp) continue;
      const list = out.get(e.mcp.server) ?? [];
      list.push(e);
      out.set(e.mcp.server, list);
    }
    return out;
  }

  search(query: string, limit: number): CatalogEntry[] {
    this.index ??= new SearchIndex(this.guestEntries);
    return this.index.search(query, limit);
  }

  sourceCounts(): { openclaw: number; mcp: number; client: number } {
    const counts = { openclaw: 0, mcp: 0, client: 0 };
    for (const e of this.projection.entries) counts[e.source]++;
    return counts;
  }
}

/** Bounded guest metadata for a handle (`toJSON()` result). Never includes the id. */
export function guestMetadata(entry: CatalogEntry): ToolCatalogMetadata {
  const meta: ToolCatalogMetadata = {
    callableName: entry.callableName,
    toolName: entry.toolName,
    ...(entry.label ? { label: entry.label } : {}),
    description: entry.description.length > 400 ? entry.description.slice(0, 399) + "…" : entry.description,
    source: entry.source === "client" ? "client" : "openclaw",
  };
  if (entry.source === "client") {
    meta.input = "unknown";
  } else {
    meta.input = inputHint(entry.parameters);
    const out = entry.origin !== "mcp" ? outputHint(entry.outputSchema) : undefined;
    if (out) meta.output = out;
  }
  return meta;
}

/** Full schema on demand (`describe()`); name + parameters + trusted outputSchema. */
export function guestDescription(entry: CatalogEntry) {
  const { toolName: _omit, ...meta } = guestMetadata(entry);
  return {
    ...meta,
    description: entry.description,
    name: entry.toolName,
    parameters: entry.parameters,
    ...(entry.outputSchema && entry.source === "openclaw" ? { outputSchema: entry.outputSchema } : {}),
  };
}
