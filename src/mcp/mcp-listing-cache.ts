import type { McpToolInfo } from "./mcp-client";

/**
 * Tool listings by server identity (mcp-identity.ts), per isolate: opening a turn with a server
 * the gateway listed recently costs no `tools/list` (issue 22). An entry is served until its TTL
 * passes (by the caller's clock, so tests move time by hand), the server says its list changed
 * (`notifications/tools/list_changed`), or a `tools/call` answers that a listed tool is unknown:
 * those drop the entry and the next turn lists again. Dropping is O(1), so a server flooding
 * notifications costs one re-listing, not one per notification.
 *
 * BOUNDS: at most `maxEntries` listings and `maxBytes` of tool JSON in all, least recently used
 * dropped first; a listing is cached only after the per-listing bounds accepted it
 * (MCP_TOOL_LIST_LIMITS) and with secrets already masked. A server can only write its own key,
 * so it cannot poison another server's listing.
 */
export type CachedListing = { tools: McpToolInfo[]; bytes: number };

type Entry = CachedListing & { at: number };

export const MCP_LISTING_CACHE_ENTRIES = 64;
export const MCP_LISTING_CACHE_BYTES = 16 * 1024 * 1024;

/** Stale marks remembered (so a listing that raced a notification is not cached); oldest forgotten first. */
const STALE_MARKS = 256;

export class McpListingCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  /** Sequence of stale marks, and each key's last one: a listing started before it is not cached. */
  private seq = 0;
  private readonly staleAt = new Map<string, number>();
  /** The newest stale mark forgotten: a listing started before it may have raced it, so it is not cached. */
  private forgotten = -1;

  constructor(
    private readonly maxEntries = MCP_LISTING_CACHE_ENTRIES,
    private readonly maxBytes = MCP_LISTING_CACHE_BYTES,
  ) {}

  /** The listing of `key` if it was fetched less than `ttlMs` ago by `now`. */
  get(key: string, now: number, ttlMs: number): CachedListing | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // A clock that moved back (an injected one) counts as expired too: never serve the unknown.
    if (now - entry.at >= ttlMs || now < entry.at) {
      this.drop(key);
      return undefined;
    }
    // Most recently used last (Map order is insertion order).
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /** Taken before listing and handed to `set`: a stale mark in between keeps the listing out. */
  mark(): number {
    return this.seq;
  }

  set(key: string, listing: CachedListing, now: number, since = this.seq): void {
    if ((this.staleAt.get(key) ?? -1) > since || this.forgotten > since) return;
    this.drop(key);
    if (listing.bytes > this.maxBytes) return;
    this.entries.set(key, { ...listing, at: now });
    this.total += listing.bytes;
    for (const [oldest] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.total <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  /** The server said its tools changed, or that a listed tool is unknown: list it again next time. */
  stale(key: string): void {
    this.drop(key);
    this.staleAt.delete(key);
    this.staleAt.set(key, ++this.seq);
    if (this.staleAt.size > STALE_MARKS) {
      const [oldest, at] = this.staleAt.entries().next().value!;
      this.staleAt.delete(oldest);
      this.forgotten = at;
    }
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The isolate's listings (keys are identities, so tenants with different credentials never share). */
export const MCP_LISTINGS = new McpListingCache();
