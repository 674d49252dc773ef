/**
 * Deterministic opaque identity for a tool: the same (origin, owner, name) always maps to
 * the same id, so ids are stable within a turn and across equivalent tool sets.
 * FNV-1a 64-bit; this is routing, not security.
 */
export function opaqueToolId(origin: string, owner: string, name: string): string {
  return "t" + fnv1a64(`${origin}\u0000${owner}\u0000${name}`);
}

export function fnv1a64(text: string): string {
  // 64-bit FNV-1a in two 32-bit halves (the same digits as BigInt arithmetic, without a BigInt per character):
  // h * prime = h * 0x1b3 + (h << 40), modulo 2^64.
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < text.length; i++) {
    lo = (lo ^ text.charCodeAt(i)) >>> 0;
    const low = lo * 0x1b3; // < 2^41: exact
    const carry = Math.floor(low / 0x100000000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0");
}
