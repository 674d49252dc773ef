import { fnv1a64 } from "./opaque-id";
import { isReservedGuestName, OBJECT_PROTOCOL_NAMES, SPECIALIZED_GLOBALS } from "../guest-names";

export { OBJECT_PROTOCOL_NAMES, SPECIALIZED_GLOBALS };

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function isJsSafeName(name: string): boolean {
  return (
    // Reserved words and protocol names (src/guest-names.ts): an own global `toString` would
    // shadow Object.prototype's, `then` make `globalThis` a thenable, `toJSON` replace how it serializes.
    IDENT.test(name) && !isReservedGuestName(name) && !SPECIALIZED_GLOBALS.has(name)
  );
}

/** Invalid identifier characters become `_`; a still-invalid first character gets `tool_`. */
export function normalizeToolName(name: string): string {
  let out = name.replace(/[^A-Za-z0-9_$]/g, "_");
  if (out.length === 0 || !/^[A-Za-z_$]/.test(out)) out = "tool_" + out;
  return out;
}

/**
 * Final guest callable names for tools in catalog order. Exact JS-safe names win their
 * unsuffixed spelling; normalised names come next when free; reserved words, specialized
 * globals, plugin namespace names (`reserved`) and collisions get a short suffix derived from
 * the host-only identity.
 * Computed once per turn; the result is stored with the turn and reused across resumes.
 */
export function assignCallableNames(tools: ReadonlyArray<{ id: string; toolName: string }>, reserved: Iterable<string> = []): Map<string, string> {
  const names = new Map<string, string>();
  // `reserved`: plugin namespace globals; a tool of the same name is suffixed like one named after a specialized global.
  const taken = new Set<string>(reserved);
  // Pass 1: exact safe names claim their spelling.
  for (const t of tools) {
    if (isJsSafeName(t.toolName) && !taken.has(t.toolName)) {
      names.set(t.id, t.toolName);
      taken.add(t.toolName);
    }
  }
  // Pass 2: normalised names when free and safe.
  for (const t of tools) {
    if (names.has(t.id)) continue;
    const base = normalizeToolName(t.toolName);
    if (isJsSafeName(base) && !taken.has(base)) {
      names.set(t.id, base);
      taken.add(base);
    }
  }
  // Pass 3: deterministic suffix from the opaque identity.
  for (const t of tools) {
    if (names.has(t.id)) continue;
    const base = normalizeToolName(t.toolName).replace(/^__+/, "_");
    const digest = fnv1a64(t.id);
    let len = 4;
    let candidate = `${base}_${digest.slice(0, len)}`;
    while (taken.has(candidate) && len < digest.length) candidate = `${base}_${digest.slice(0, ++len)}`;
    names.set(t.id, candidate);
    taken.add(candidate);
  }
  return names;
}
