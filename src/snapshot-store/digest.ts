/** Lowercase hex SHA-256 of the concatenated parts. */
export async function sha256Hex(...parts: Uint8Array[]): Promise<string> {
  const input = parts.length === 1 ? parts[0]! : concat(parts);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", input));
  return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
