import { SearchIndex } from "../catalog";
import type { CatalogEntry, CatalogProjection } from "../catalog";

/**
 * Tool Search's view of a turn's catalog (seed 004): every cataloged tool of the run, MCP
 * included (unlike code mode's generic `catalog.search`), addressed by a *Tool Search id* the
 * model may see: `openclaw:<name>` (core), `plugin:<pluginId>:<name>`, `mcp:<server>:<tool>`,
 * `client:<name>`. These are product names, not the catalog's opaque host-only ids, which never
 * leave the host. Names are unique within a turn (one effective winner per name), so a tool's
 * exact name is accepted wherever an id is.
 */
export type ToolSearchSource = "openclaw" | "mcp" | "client";

/** A search hit: compact and safe to put back into prompt context. */
export type ToolSearchHit = { id: string; name: string; description: string; source: ToolSearchSource };

/** `describe`: everything needed to call the tool. */
export type ToolSearchDescription = ToolSearchHit & { inputSchema: unknown; outputSchema?: unknown };

/** Descriptions in hits are cut here (describe gives the full text). */
export const HIT_DESCRIPTION_CHARS = 200;

export function toolSearchId(entry: CatalogEntry): string {
  if (entry.source === "client") return `client:${entry.toolName}`;
  if (entry.mcp) return `mcp:${entry.mcp.server}:${entry.mcp.tool}`;
  if (entry.origin === "core" || entry.pluginId === undefined) return `openclaw:${entry.toolName}`;
  return `plugin:${entry.pluginId}:${entry.toolName}`;
}

export class ToolSearchCatalog {
  private readonly byKey = new Map<string, CatalogEntry>();
  private index?: SearchIndex;

  constructor(readonly projection: CatalogProjection) {
    for (const e of projection.entries) this.byKey.set(e.toolName, e);
    // Ids win over names on a clash: an id is what search handed out.
    for (const e of projection.entries) this.byKey.set(toolSearchId(e), e);
  }

  get size(): number {
    return this.projection.entries.length;
  }

  /** The entry for a Tool Search id (or exact tool name); undefined for anything else. */
  lookup(idOrName: string): CatalogEntry | undefined {
    return this.byKey.get(idOrName);
  }

  search(query: string, limit: number): ToolSearchHit[] {
    this.index ??= new SearchIndex(this.projection.entries);
    return this.index.search(query, limit).map(hit);
  }

  describe(entry: CatalogEntry): ToolSearchDescription {
    return {
      ...hit(entry),
      description: entry.description,
      inputSchema: entry.parameters,
      // Only a trusted (core/plugin) contract is promoted; client and MCP claims are not.
      ...(entry.outputSchema && entry.source === "openclaw" ? { outputSchema: entry.outputSchema } : {}),
    };
  }
}

function hit(entry: CatalogEntry): ToolSearchHit {
  const d = entry.description;
  return {
    id: toolSearchId(entry),
    name: entry.toolName,
    description: d.length > HIT_DESCRIPTION_CHARS ? d.slice(0, HIT_DESCRIPTION_CHARS - 1) + "…" : d,
    source: entry.source,
  };
}
