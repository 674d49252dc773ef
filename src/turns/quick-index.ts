import { guestMetadata } from "../catalog";
import type { CatalogEntry } from "../catalog";
import { QUICK_INDEX_MAX_CHARS, QUICK_INDEX_MAX_ENTRIES } from "../limits";

/**
 * Quick index lines: final callable names with compact input hints and trusted output
 * hints (`-> ?` when unknown). No descriptions (adversarial prose must not steer the model),
 * no MCP entries, no overflow entries.
 */
export function renderQuickIndex(entries: readonly CatalogEntry[]): { lines: string[]; omitted: number } {
  const lines: string[] = [];
  let chars = 0;
  const visible = entries.filter((e) => e.source !== "mcp");
  for (const entry of visible) {
    if (lines.length >= QUICK_INDEX_MAX_ENTRIES) break;
    const meta = guestMetadata(entry);
    const line = `${meta.callableName}(input: ${meta.input ?? "unknown"}) -> ${meta.output ?? "?"}`;
    if (chars + line.length + 1 > QUICK_INDEX_MAX_CHARS) break;
    lines.push(line);
    chars += line.length + 1;
  }
  return { lines, omitted: visible.length - lines.length };
}
