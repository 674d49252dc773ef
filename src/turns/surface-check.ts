import type { CatalogProjection } from "../catalog";
import type { ModelTool } from "./surface";

/** The control tools no catalog tool may stand in for on a code-mode surface. */
const CODE_MODE_CONTROLS = ["exec", "wait"] as const;

/**
 * The last look before a surface is sent (seed 002, Debugging: code mode "fails closed if the final
 * provider payload does not contain exactly one `exec`, one `wait`, and only approved direct-only
 * tools"). Code mode: exactly one `exec`, one `wait`, and only the turn's direct-only tools. Direct
 * exposure: only the turn's effective tools, each once. Anything else is refused, never sent.
 */
export function checkSurface(
  tools: readonly ModelTool[],
  catalog: CatalogProjection,
  codeModeEngaged: boolean,
): { ok: true } | { ok: false; message: string } {
  const names = tools.map((t) => t.name);
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) return refuse(`tool ${JSON.stringify(name)} appears twice`);
    seen.add(name);
  }
  const direct = new Set(catalog.direct.map((e) => e.toolName));
  if (codeModeEngaged) {
    for (const control of CODE_MODE_CONTROLS) if (!seen.has(control)) return refuse(`the code-mode surface lacks ${control}`);
    const extra = names.filter((n) => !(CODE_MODE_CONTROLS as readonly string[]).includes(n) && !direct.has(n));
    if (extra.length > 0) return refuse(`the code-mode surface holds tools that are not direct-only: ${extra.slice(0, 5).join(", ")}`);
    return { ok: true };
  }
  const effective = new Set([...catalog.entries.map((e) => e.toolName), ...direct]);
  const unknown = names.filter((n) => !effective.has(n));
  if (unknown.length > 0) return refuse(`the direct surface holds tools outside the turn's catalog: ${unknown.slice(0, 5).join(", ")}`);
  return { ok: true };
}

function refuse(why: string): { ok: false; message: string } {
  return { ok: false, message: `the model-facing tool surface failed its check (${why}); nothing was sent` };
}
