import { describe, expect, it } from "vitest";
import { McpListingCache, MCP_LISTING_CACHE_BYTES, MCP_LISTING_CACHE_ENTRIES } from "../../../src/mcp/mcp-listing-cache";
import { serverIdentity } from "../../../src/mcp/mcp-identity";

// The isolate's tool-listing cache (its entry and byte bounds, LRU order, stale marks) and the
// server identities it is keyed by.

const TTL = 60_000;
const listing = (bytes: number, name = "t") => ({ tools: [{ name, inputSchema: { type: "object" } }] as any[], bytes });

describe("McpListingCache", () => {
  it(`holds at most ${MCP_LISTING_CACHE_ENTRIES} listings, dropping the least recently used first`, () => {
    const cache = new McpListingCache();
    for (let i = 0; i < MCP_LISTING_CACHE_ENTRIES; i++) cache.set(`k${i}`, listing(10), 0);
    expect(cache.get("k0", 1, TTL)).toBeDefined(); // k0 used: k1 is now the oldest
    cache.set("new", listing(10), 1);
    expect(cache.size).toBe(MCP_LISTING_CACHE_ENTRIES);
    expect(cache.get("k1", 2, TTL)).toBeUndefined();
    expect(cache.get("k0", 2, TTL)).toBeDefined();
    expect(cache.get("new", 2, TTL)).toBeDefined();
  });

  it(`holds at most ${MCP_LISTING_CACHE_BYTES / 1024 / 1024} MiB of tool JSON, dropping the least recently used first`, () => {
    const cache = new McpListingCache();
    const quarter = MCP_LISTING_CACHE_BYTES / 4;
    for (const k of ["a", "b", "c", "d"]) cache.set(k, listing(quarter), 0);
    expect(cache.get("a", 1, TTL)).toBeDefined(); // a used: b is the oldest
    cache.set("e", listing(1), 1);
    expect(cache.get("b", 2, TTL)).toBeUndefined();
    for (const k of ["a", "c", "d", "e"]) expect(cache.get(k, 2, TTL)).toBeDefined();
    // A listing larger than the whole budget is not cached, and evicts nothing.
    cache.set("huge", listing(MCP_LISTING_CACHE_BYTES + 1), 3);
    expect(cache.get("huge", 3, TTL)).toBeUndefined();
    expect(cache.size).toBe(4);
  });

  it("replacing a key's listing counts its bytes once", () => {
    const cache = new McpListingCache(8, 100);
    for (let i = 0; i < 10; i++) cache.set("same", listing(60), i);
    cache.set("other", listing(40), 10);
    expect(cache.get("same", 11, TTL)).toBeDefined();
    expect(cache.get("other", 11, TTL)).toBeDefined();
  });

  it("serves a listing until its TTL passes, and never after the clock moved back", () => {
    const cache = new McpListingCache();
    cache.set("k", listing(10), 1_000);
    expect(cache.get("k", 1_000 + TTL - 1, TTL)).toBeDefined();
    expect(cache.get("k", 1_000 + TTL, TTL)).toBeUndefined();
    cache.set("k", listing(10), 1_000);
    expect(cache.get("k", 999, TTL)).toBeUndefined();
  });

  it("list_changed during an in-flight listing keeps that listing out; a listing started after it is cached", () => {
    const cache = new McpListingCache();
    const before = cache.mark();
    cache.stale("k"); // the notification arrives while tools/list is under way
    cache.set("k", listing(10), 0, before);
    expect(cache.get("k", 1, TTL)).toBeUndefined();
    const after = cache.mark();
    cache.set("k", listing(10), 2, after);
    expect(cache.get("k", 3, TTL)).toBeDefined();
    // Another server's notification does not block this one's listing.
    const mark = cache.mark();
    cache.stale("other");
    cache.set("k2", listing(10), 4, mark);
    expect(cache.get("k2", 5, TTL)).toBeDefined();
  });

  it("a listing in flight while many servers went stale (its own mark forgotten) is still kept out", () => {
    const cache = new McpListingCache();
    const before = cache.mark();
    cache.stale("k");
    // More notifications than the marks the cache remembers: k's own mark is forgotten.
    for (let i = 0; i < 300; i++) cache.stale(`flood${i}`);
    cache.set("k", listing(10), 0, before);
    expect(cache.get("k", 1, TTL)).toBeUndefined();
  });
});

describe("serverIdentity", () => {
  const target = (headers: Record<string, string>, url = "https://mcp.example/mcp?token=url-secret-123") => ({
    server: "s",
    url: new URL(url),
    headers,
  });

  it("is a digest: no header value, header name or URL part appears in the key", async () => {
    const key = await serverIdentity(target({ authorization: "Bearer header-secret-456", "x-tenant": "plain-value-789" }), [
      "Bearer header-secret-456",
    ]);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    for (const part of ["header-secret-456", "plain-value-789", "authorization", "url-secret-123", "mcp.example"]) expect(key).not.toContain(part);
  });

  it("differs when any header value or the URL differs; header order and name case do not matter", async () => {
    const a = await serverIdentity(target({ Authorization: "Bearer one", "x-a": "1" }), []);
    expect(await serverIdentity(target({ "x-a": "1", authorization: "Bearer one" }), [])).toBe(a);
    expect(await serverIdentity(target({ Authorization: "Bearer two", "x-a": "1" }), [])).not.toBe(a);
    expect(await serverIdentity(target({ Authorization: "Bearer one", "x-a": "1" }, "https://mcp.example/other"), [])).not.toBe(a);
    // The same value sent as a secret or as a plain setting is a different identity.
    expect(await serverIdentity(target({ Authorization: "Bearer one", "x-a": "1" }), ["Bearer one"])).not.toBe(a);
  });
});
