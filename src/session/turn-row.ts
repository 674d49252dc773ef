import { catalogJson, MAX_CALLED_TOOLS, sameCatalogJson, type TurnCounters, type TurnSpec } from "../turns";
import { toolSearchId } from "../tool-search";
import { sha256Hex } from "../snapshot-store";
import type { EncodedTurn, StoredTurn } from "./ports";

const utf8 = new TextEncoder();

/** A turn's row as the turn store writes it, with the bytes it is charged (ports.ts, EncodedTurn). */

export function encodeTurn(spec: TurnSpec, counters: TurnCounters): EncodedTurn {
  // The catalog is most of a turn's row and is shared by turns opened alike (src/catalog/catalog-cache.ts):
  // its JSON, bytes and counters ceiling are computed once per catalog, the rest of the spec per turn.
  const catalog = encodedCatalog(spec.catalog);
  const { catalog: _catalog, ...rest } = spec;
  const head = JSON.stringify(rest);
  const s = `${head.slice(0, -1)}${head === "{}" ? "" : ","}"catalog":${catalog.json}}`;
  const c = JSON.stringify(counters);
  const specBytes = utf8.encode(head).length + (head === "{}" ? 0 : 1) + CATALOG_KEY_BYTES + catalog.bytes;
  const countersBytes = utf8.encode(c).length;
  return {
    spec: s,
    counters: c,
    bytes: specBytes + countersBytes,
    charged: specBytes + Math.max(countersBytes, catalog.ceiling),
    head,
    catalog: catalog.json,
  };
}

const digests = new WeakMap<TurnSpec["catalog"], Promise<string>>();

/**
 * The SHA-256 of a catalog's JSON (`encodeTurn`'s `catalog`), computed once per catalog: the key of
 * its one stored copy in a session. A digest, not a cache key: the same tools reach the same row from
 * any isolate, and a hostile MCP server cannot make its tools share another catalog's row.
 */
export function catalogDigest(catalog: TurnSpec["catalog"]): Promise<string> {
  let out = digests.get(catalog);
  if (!out) {
    out = sha256Hex(utf8.encode(encodedCatalog(catalog).json));
    digests.set(catalog, out);
    // A failed digest is not kept: the next turn computes it again.
    out.catch(() => digests.delete(catalog));
  }
  return out;
}

/**
 * The turn as the store would read its row back (`JSON.parse` of `encodeTurn`'s text, key order
 * included), without parsing the catalog again: its parsed form is kept per catalog, like its JSON,
 * and shared by the turns opened alike (a turn's spec is never changed after it opens). The store
 * keeps this in memory when it inserts the row, so the /chat call that opened the turn does not
 * parse the whole catalog back before its first model call.
 */
export function decodedTurn(spec: TurnSpec, row: EncodedTurn): StoredTurn {
  const { catalog, ...rest } = spec;
  let parsed = parsedCatalogs.get(catalog);
  if (!parsed) {
    parsed = JSON.parse(encodedCatalog(catalog).json) as TurnSpec["catalog"];
    parsedCatalogs.set(catalog, parsed);
    encodedCatalogs.set(parsed, encodedCatalog(catalog));
    sameCatalogJson(parsed, catalog);
  }
  return { spec: { ...(JSON.parse(JSON.stringify(rest)) as Omit<TurnSpec, "catalog">), catalog: parsed }, counters: JSON.parse(row.counters) };
}

const parsedCatalogs = new WeakMap<TurnSpec["catalog"], TurnSpec["catalog"]>();

/** `"catalog":` */
const CATALOG_KEY_BYTES = 10;

const encodedCatalogs = new WeakMap<TurnSpec["catalog"], { json: string; bytes: number; ceiling: number }>();

function encodedCatalog(catalog: TurnSpec["catalog"]): { json: string; bytes: number; ceiling: number } {
  let out = encodedCatalogs.get(catalog);
  if (!out) {
    const json = catalogJson(catalog);
    out = { json, bytes: utf8.encode(json).length, ceiling: countersCeiling({ catalog } as TurnSpec) };
    encodedCatalogs.set(catalog, out);
  }
  return out;
}

const MAX = Number.MAX_SAFE_INTEGER;
const BASE_BYTES = utf8.encode(JSON.stringify({ search: MAX, describe: MAX, call: MAX, called: [] })).length;
/** A `called` entry less its two strings: `{"tool":…,"id":…,"source":"…","calls":MAX}` and its comma. */
const ENTRY_BYTES = { client: calledBytes("", "", "client") - 4, openclaw: calledBytes("", "", "openclaw") - 4 };

/** UTF-8 bytes of one `called` entry as JSON, and its comma (the reference the ceiling is computed by). */
export function calledBytes(tool: string, id: string, source: "client" | "openclaw"): number {
  return utf8.encode(JSON.stringify({ tool, id, source, calls: MAX })).length + 1;
}

/**
 * The largest `counters` of this turn can become (see EncodedTurn). Per entry, the same bytes as
 * `calledBytes` (its two strings as JSON, counted without encoding them), for every tool of the catalog.
 */
export function countersCeiling(spec: TurnSpec): number {
  const entries = [...spec.catalog.entries, ...spec.catalog.direct].map(
    (e) => ENTRY_BYTES[e.source === "client" ? "client" : "openclaw"] + jsonUtf8Bytes(e.toolName) + jsonUtf8Bytes(toolSearchId(e)),
  );
  entries.sort((a, b) => b - a);
  return BASE_BYTES + entries.slice(0, MAX_CALLED_TOOLS).reduce((n, b) => n + b, 0);
}

/** UTF-8 bytes of `JSON.stringify(s)` (which escapes lone surrogates, so every pair left is whole). */
function jsonUtf8Bytes(s: string): number {
  const json = JSON.stringify(s);
  let n = json.length;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 2; // a pair: 4 bytes for 2 code units
      i++;
    } else n += 2;
  }
  return n;
}
