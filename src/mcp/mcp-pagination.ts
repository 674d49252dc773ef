/**
 * Following MCP cursor pagination to the end (`tools/list`, …: each page may carry `nextCursor`;
 * its absence ends the listing). Pure apart from the injected page fetcher, so the loop and its
 * caps are unit-tested without a server.
 *
 * RULES: pages are fetched one after another; a listing that would need more than `maxPages`
 * pages, holds more than `maxItems` items or more than `maxBytes` bytes (as the fetcher measures
 * its pages) is refused (not cut short: a silently partial tool list would look complete), and so
 * is a cursor the server already gave (a loop), and a page the fetcher refuses (`refused`: why).
 * Errors of the fetcher propagate unchanged to the caller, which classifies them.
 */
import { MAX_MCP_TOOLS_BYTES } from "../limits";

export type McpPage<T> = { items: T[]; nextCursor?: string | undefined; bytes?: number } | { refused: string };

export type McpListLimits = { maxPages: number; maxItems: number; maxBytes: number };

/** Caps for `tools/list`: far above real servers, low enough to bound one turn's catalog. */
export const MCP_TOOL_LIST_LIMITS: McpListLimits = { maxPages: 50, maxItems: 1000, maxBytes: MAX_MCP_TOOLS_BYTES };

export type McpCollected<T> = { ok: true; items: T[]; pages: number; bytes: number } | { ok: false; message: string };

export async function collectPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<McpPage<T>>,
  limits: McpListLimits,
): Promise<McpCollected<T>> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let bytes = 0;
  for (let pages = 1; ; pages++) {
    const page = await fetchPage(cursor);
    if ("refused" in page) return { ok: false, message: page.refused };
    items.push(...page.items);
    bytes += page.bytes ?? 0;
    if (items.length > limits.maxItems) {
      return { ok: false, message: `lists more than ${limits.maxItems} items; refused (the limit keeps one turn's catalog bounded)` };
    }
    if (bytes > limits.maxBytes) {
      return {
        ok: false,
        message: `lists more than ${limits.maxBytes} bytes of tools (names, descriptions, schemas); refused (the limit keeps one turn's stored catalog bounded)`,
      };
    }
    if (page.nextCursor === undefined) return { ok: true, items, pages, bytes };
    if (seen.has(page.nextCursor)) return { ok: false, message: `repeated a pagination cursor after ${pages} pages; refused (a cursor loop)` };
    if (pages >= limits.maxPages) {
      return { ok: false, message: `needs more than ${limits.maxPages} pages; refused (the limit keeps one turn's catalog bounded)` };
    }
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}
