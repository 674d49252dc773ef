/**
 * Following MCP cursor pagination to the end (`tools/list`, …: each page may carry `nextCursor`;
 * its absence ends the listing). Pure apart from the injected page fetcher, so the loop and its
 * caps are unit-tested without a server.
 *
 * RULES: pages are fetched one after another; a listing that would need more than `maxPages`
 * pages or holds more than `maxItems` items is refused (not cut short: a silently partial tool
 * list would look complete), and so is a cursor the server already gave (a loop). Errors of the
 * fetcher propagate unchanged to the caller, which classifies them.
 */

export type McpPage<T> = { items: T[]; nextCursor?: string | undefined };

export type McpListLimits = { maxPages: number; maxItems: number };

/** Caps for `tools/list`: far above real servers, low enough to bound one turn's catalog. */
export const MCP_TOOL_LIST_LIMITS: McpListLimits = { maxPages: 50, maxItems: 1000 };

export type McpCollected<T> = { ok: true; items: T[]; pages: number } | { ok: false; message: string };

export async function collectPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<McpPage<T>>,
  limits: McpListLimits,
): Promise<McpCollected<T>> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    if (items.length > limits.maxItems) {
      return { ok: false, message: `lists more than ${limits.maxItems} items; refused (the limit keeps one turn's catalog bounded)` };
    }
    if (page.nextCursor === undefined) return { ok: true, items, pages };
    if (seen.has(page.nextCursor)) return { ok: false, message: `repeated a pagination cursor after ${pages} pages; refused (a cursor loop)` };
    if (pages >= limits.maxPages) {
      return { ok: false, message: `needs more than ${limits.maxPages} pages; refused (the limit keeps one turn's catalog bounded)` };
    }
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}
