import type { CatalogProjection } from "../catalog";
import { TOOL_SEARCH_CONTROLS } from "../tool-search";
import type { ModelTool, SurfaceShape } from "./surface";

/** The control tools no catalog tool may stand in for on a code-mode surface. */
const CODE_MODE_CONTROLS = ["exec", "wait"] as const;

/**
 * The last look before a surface is sent (seed 002, Debugging: code mode "fails closed if the final
 * provider payload does not contain exactly one `exec`, one `wait`, and only approved direct-only
 * tools"; seed 004: Tool Search fails closed). Every name appears once, and:
 * - code mode: `exec`, `wait`, and only the turn's direct-only tools;
 * - Tool Search: exactly its mode's controls, and only the turn's direct-only tools;
 * - direct exposure: only the turn's effective tools;
 * - no tools for the run: nothing.
 * Anything else is refused, never sent.
 */
export function checkSurface(
  tools: readonly ModelTool[],
  catalog: CatalogProjection,
  shape: SurfaceShape,
): { ok: true } | { ok: false; message: string } {
  const names = tools.map((t) => t.name);
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) return refuse(`tool ${JSON.stringify(name)} appears twice`);
    seen.add(name);
  }
  const direct = new Set(catalog.direct.map((e) => e.toolName));
  const controlled = (controls: readonly string[], label: string) => {
    for (const control of controls) if (!seen.has(control)) return refuse(`the ${label} surface lacks ${control}`);
    const extra = names.filter((n) => !controls.includes(n) && !direct.has(n));
    if (extra.length > 0) return refuse(`the ${label} surface holds tools that are not direct-only: ${extra.slice(0, 5).join(", ")}`);
    return { ok: true as const };
  };
  switch (shape.kind) {
    case "none":
      return names.length === 0 ? { ok: true } : refuse(`a run without tools was given ${names.slice(0, 5).join(", ")}`);
    case "code_mode":
      return controlled(CODE_MODE_CONTROLS, "code-mode");
    case "tool_search":
      return controlled(TOOL_SEARCH_CONTROLS[shape.toolSearch.mode], `Tool Search (${shape.toolSearch.mode})`);
    case "direct": {
      const effective = new Set([...catalog.entries.map((e) => e.toolName), ...direct]);
      const unknown = names.filter((n) => !effective.has(n));
      if (unknown.length > 0) return refuse(`the direct surface holds tools outside the turn's catalog: ${unknown.slice(0, 5).join(", ")}`);
      return { ok: true };
    }
  }
}

function refuse(why: string): { ok: false; message: string } {
  return { ok: false, message: `the model-facing tool surface failed its check (${why}); nothing was sent` };
}
