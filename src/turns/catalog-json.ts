import type { TurnSpec } from "./turn-spec";

type CatalogProjection = TurnSpec["catalog"];

/**
 * A turn's catalog as JSON, once per catalog object: the turn row stores it and the cell runtime
 * is keyed by it, and with hundreds of MCP tools one `JSON.stringify` of it costs most of a
 * millisecond. A spec is never changed after its turn opens, so the text stays true.
 */
const texts = new WeakMap<CatalogProjection, string>();

export function catalogJson(catalog: CatalogProjection): string {
  let json = texts.get(catalog);
  if (json === undefined) {
    json = JSON.stringify(catalog);
    texts.set(catalog, json);
  }
  return json;
}

/** `copy` was parsed from `catalogJson(original)`: it stringifies to the same text. */
export function sameCatalogJson(copy: CatalogProjection, original: CatalogProjection): void {
  const json = texts.get(original);
  if (json !== undefined) texts.set(copy, json);
}
