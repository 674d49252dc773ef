/**
 * Deterministic opaque identity for a tool: the same (origin, owner, name) always maps to
 * the same id, so ids are stable within a turn and across equivalent tool sets.
 * FNV-1a 64-bit; this is routing, not security.
 */
export function opaqueToolId(origin: string, owner: string, name: string): string {
  return "t" + fnv1a64(`${origin}\u0000${owner}\u0000${name}`);
}

export function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * prime) & mask;
  }
  return h.toString(16).padStart(16, "0");
}
