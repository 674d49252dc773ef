import { buildCatalog, type CatalogInput } from "./build-catalog";
import type { CatalogProjection } from "./types";

/** Catalogs kept per isolate (a few agents and tool sets: a bounded LRU). */
export const CATALOG_CACHE_ENTRIES = 32;

/**
 * `buildCatalog`, built once per input: turns opened with the same plugins, the same MCP listings
 * (the listing cache hands out the same tools array while its entry is fresh, mcp-listing-cache.ts),
 * the same client tools and the same allow/deny share one catalog, frozen (a turn only reads it).
 * A listing fetched again is a new array, so a changed server never serves an old catalog.
 */
export class CatalogCache {
  private readonly entries = new Map<string, CatalogProjection>();
  /** Identities of the plugin sets and listings seen (never reused for another object). */
  private readonly ids = new WeakMap<object, number>();
  private next = 0;
  hits = 0;

  constructor(private readonly maxEntries = CATALOG_CACHE_ENTRIES) {}

  build(input: CatalogInput): CatalogProjection {
    const key = this.key(input);
    const hit = this.entries.get(key);
    if (hit) {
      this.hits++;
      // Most recently used last (Map order is insertion order).
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const catalog = frozen(buildCatalog(input));
    this.entries.set(key, catalog);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return catalog;
  }

  private key(input: CatalogInput): string {
    const servers = (input.mcpServers ?? []).map((s) => [s.name, this.id(s.tools)]);
    // Client tools and the policy come with each request: compared by value.
    return JSON.stringify([this.id(input.plugins), servers, input.clientTools ?? null, input.policy.allow ?? null, input.policy.deny ?? null]);
  }

  private id(o: object): number {
    let n = this.ids.get(o);
    if (n === undefined) {
      n = this.next++;
      this.ids.set(o, n);
    }
    return n;
  }
}

/** The projection, its lists and their entries (not the schemas: those are the plugins' and listings' own, shared already). */
function frozen(catalog: CatalogProjection): CatalogProjection {
  for (const e of catalog.entries) Object.freeze(e);
  for (const e of catalog.direct) Object.freeze(e);
  for (const n of catalog.namespaces ?? []) Object.freeze(n);
  Object.freeze(catalog.entries);
  Object.freeze(catalog.direct);
  if (catalog.namespaces) Object.freeze(catalog.namespaces);
  return Object.freeze(catalog);
}

/** The isolate's catalog cache (turn opening, src/turns/turn-opening.ts). */
export const CATALOGS = new CatalogCache();
