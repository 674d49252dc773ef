import { describe, expect, it } from "vitest";
import { collectPages, type McpPage } from "../../../src/mcp";

describe("collectPages: cursor pagination with caps", () => {
  function pages(n: number, perPage: number) {
    const calls: Array<string | undefined> = [];
    const fetchPage = async (cursor: string | undefined): Promise<McpPage<number>> => {
      calls.push(cursor);
      const i = cursor === undefined ? 0 : Number(cursor.slice(1));
      const items = Array.from({ length: perPage }, (_, k) => i * perPage + k);
      return i + 1 < n ? { items, nextCursor: `c${i + 1}` } : { items };
    };
    return { calls, fetchPage };
  }

  it("follows nextCursor to the end, in order, passing each cursor back", async () => {
    const { calls, fetchPage } = pages(3, 2);
    expect(await collectPages(fetchPage, { maxPages: 50, maxItems: 1000, maxBytes: 1e9 })).toEqual({
      ok: true,
      items: [0, 1, 2, 3, 4, 5],
      pages: 3,
      bytes: 0,
    });
    expect(calls).toEqual([undefined, "c1", "c2"]);
  });

  it("exactly maxPages pages and maxItems items are fine; one more page or item is refused", async () => {
    expect((await collectPages(pages(5, 2).fetchPage, { maxPages: 5, maxItems: 10, maxBytes: 1e9 })).ok).toBe(true);
    expect(await collectPages(pages(6, 1).fetchPage, { maxPages: 5, maxItems: 100, maxBytes: 1e9 })).toEqual({
      ok: false,
      message: "needs more than 5 pages; refused (the limit keeps one turn's catalog bounded)",
    });
    expect(await collectPages(pages(3, 4).fetchPage, { maxPages: 50, maxItems: 10, maxBytes: 1e9 })).toEqual({
      ok: false,
      message: "lists more than 10 items; refused (the limit keeps one turn's catalog bounded)",
    });
  });

  it("pages past maxBytes (as the fetcher measures them) and a page the fetcher refuses end the listing, refused", async () => {
    const sized = async (cursor: string | undefined): Promise<McpPage<number>> => ({ items: [1], bytes: 600, nextCursor: cursor ? undefined : "c1" });
    expect(await collectPages(sized, { maxPages: 50, maxItems: 1000, maxBytes: 1200 })).toEqual({ ok: true, items: [1, 1], pages: 2, bytes: 1200 });
    expect(await collectPages(sized, { maxPages: 50, maxItems: 1000, maxBytes: 1000 })).toEqual({
      ok: false,
      message: "lists more than 1000 bytes of tools (names, descriptions, schemas); refused (the limit keeps one turn's stored catalog bounded)",
    });
    expect(await collectPages(async () => ({ refused: "lists a bad tool" }), { maxPages: 50, maxItems: 1000, maxBytes: 1e9 })).toEqual({
      ok: false,
      message: "lists a bad tool",
    });
  });

  it("a repeated cursor is a loop, refused", async () => {
    let calls = 0;
    const r = await collectPages(async () => (calls++, { items: [1], nextCursor: "same" }), { maxPages: 50, maxItems: 1000, maxBytes: 1e9 });
    expect(r).toEqual({ ok: false, message: "repeated a pagination cursor after 2 pages; refused (a cursor loop)" });
    expect(calls).toBe(2);
  });

  it("a fetcher error propagates", async () => {
    await expect(collectPages(async () => Promise.reject(new Error("boom")), { maxPages: 2, maxItems: 2, maxBytes: 1e9 })).rejects.toThrow("boom");
  });
});
