import type { ModelTool } from "../turns";
import type { ModelMessage } from "./types";

/**
 * Tool names as providers accept them. OpenAI (Chat Completions, Responses) and Anthropic take only
 * `^[A-Za-z0-9_-]{1,64}$`, while a catalog name may hold anything else: an MCP tool is
 * `<server>__<tool>`, and servers and tools may name themselves with dots, spaces, other scripts, or
 * at length. One refused name fails the whole request, so:
 *
 * RULES
 * - A name that fits is sent as it is.
 * - Any other gets an alias: its allowed characters (each other one becomes `_`), cut to 55, then
 *   `_` and 8 hex digits of a 32-bit FNV-1a hash of the whole name. Deterministic: replay and later
 *   rounds send the same alias for the same name.
 * - Aliases are unique among the request's names (tools offered and calls replayed) and never take a
 *   name sent as it is: a clash appends `_2`, `_3` … (cut again to fit), in the order names are met.
 * - The model's calls are mapped back; a name the request never sent comes back unchanged (the loop
 *   then answers "unknown tool" with it).
 * The rest of the gateway sees only catalog names: mapping happens at the wire, per model call.
 */
const WIRE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX = 64;

export type WireNames = { toWire(name: string): string; fromWire(name: string): string };

export function wireNames(tools: readonly ModelTool[], messages: readonly ModelMessage[]): WireNames {
  const names: string[] = tools.map((t) => t.name);
  for (const m of messages) {
    if (m.role === "assistant") for (const c of m.toolCalls ?? []) names.push(c.name);
    else if (m.role === "tool") names.push(m.toolName);
  }
  const out = new Map<string, string>();
  const back = new Map<string, string>();
  // Names that fit keep themselves first, so no alias can take one.
  for (const name of names) {
    if (WIRE_NAME.test(name) && !out.has(name)) {
      out.set(name, name);
      back.set(name, name);
    }
  }
  for (const name of names) {
    if (out.has(name)) continue;
    const base = `${name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MAX - 9)}_${fnv1a(name)}`;
    let alias = base;
    for (let n = 2; back.has(alias); n++) alias = `${base.slice(0, MAX - String(n).length - 1)}_${n}`;
    out.set(name, alias);
    back.set(alias, name);
  }
  return { toWire: (name) => out.get(name) ?? name, fromWire: (name) => back.get(name) ?? name };
}

/** 32-bit FNV-1a over UTF-16 code units, as 8 hex digits. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
