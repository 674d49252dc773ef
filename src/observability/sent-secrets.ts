/**
 * Secrets the gateway SENDS (an MCP server's `env:` header values and a turn's own MCP header
 * values, a provider's API key) coming back from the peer that received them: an MCP server
 * echoing its `Authorization` header in a tool result, a provider echoing its key in text.
 * What comes back is masked where it enters the gateway (mcp-servers.ts for every MCP answer,
 * create-model-client.ts for every provider reply), so no guest, model, stream or row sees it.
 *
 * RULES
 * - Exact values only, 8+ characters (MIN_SECRET_CHARS): a tool result is data, so nothing that
 *   merely looks like a credential is touched here (that is redact-secrets.ts, for logs).
 * - A header value is sent whole, but a peer may echo its token alone: `secretForms` lists the
 *   value, its whitespace-separated parts that are not an auth scheme word, and for `Basic` the
 *   decoded `user:password` and the password.
 * - Every occurrence becomes MASK (`***`); longest secrets first, so one containing another is
 *   masked whole. In a JSON value every string and every object key is masked.
 * - Streams: SentSecretStream holds back the tail of the text that could still become a secret,
 *   so a secret split across deltas never leaves in pieces.
 */
import { MASK, MIN_SECRET_CHARS } from "./secret-shapes";

const AUTH_SCHEMES = new Set(["bearer", "basic", "token", "digest", "negotiate"]);

/** The spellings of one sent value that a peer could echo (see RULES). */
export function secretForms(value: string): string[] {
  const out = new Set<string>();
  const add = (v: string) => v.length >= MIN_SECRET_CHARS && out.add(v);
  add(value);
  const parts = value.split(/\s+/).filter((p) => p !== "");
  for (const part of parts) if (!AUTH_SCHEMES.has(part.toLowerCase())) add(part);
  if (parts.length === 2 && parts[0]!.toLowerCase() === "basic") {
    try {
      const decoded = atob(parts[1]!);
      add(decoded);
      const colon = decoded.indexOf(":");
      if (colon >= 0) add(decoded.slice(colon + 1));
    } catch {
      // Not base64: the token itself was added above.
    }
  }
  return [...out];
}

/** Distinct secrets of 8+ characters, longest first. */
export function sentSecretList(values: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const v of values) if (typeof v === "string") for (const form of secretForms(v)) out.add(form);
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every occurrence of a secret masked. `secrets` as sentSecretList gives them. `mask`
 * replaces MASK where the text must keep a syntax (a tool call id replayed to a provider).
 */
export function maskSentSecrets(text: string, secrets: readonly string[], mask: string = MASK): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= MIN_SECRET_CHARS && out.includes(secret)) out = out.split(secret).join(mask);
  return out;
}

/**
 * A JSON value with every string and object key masked; the same reference when nothing was
 * (the common case: one serialization, no copy). The copy is recursive: a value nested too deep
 * for it throws (the operation that brought it fails), it never passes unmasked.
 */
export function maskSentSecretsIn<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  try {
    const text = JSON.stringify(value);
    if (text === undefined || !secrets.some((s) => s.length >= MIN_SECRET_CHARS && text.includes(jsonInner(s)))) return value;
    return reviveMasked(text, secrets) as T;
  } catch {
    throw new Error("the answer is nested too deeply to be checked for secrets");
  }
}

function reviveMasked(text: string, secrets: readonly string[]): unknown {
  return JSON.parse(text, (_key, v: unknown) => {
    if (typeof v === "string") return maskSentSecrets(v, secrets);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      let changed = false;
      const entries = Object.entries(v as Record<string, unknown>).map(([k, x]): [string, unknown] => {
        const masked = maskSentSecrets(k, secrets);
        if (masked !== k) changed = true;
        return [masked, x];
      });
      return changed ? Object.fromEntries(entries) : v;
    }
    return v;
  });
}

/** How a secret appears inside JSON text (quotes, backslashes and controls escaped). */
function jsonInner(secret: string): string {
  return JSON.stringify(secret).slice(1, -1);
}

/**
 * Masks a text that arrives in pieces. `push` returns what may be shown now; `flush` the rest,
 * at the end of the text. Holds back at most the longest secret's length less one character.
 */
export class SentSecretStream {
  private held = "";

  constructor(private readonly secrets: readonly string[]) {}

  push(delta: string): string {
    if (this.secrets.length === 0) return delta;
    const text = maskSentSecrets(this.held + delta, this.secrets);
    const keep = this.pendingTail(text);
    this.held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  flush(): string {
    const rest = this.held;
    this.held = "";
    return rest;
  }

  /** Length of the longest tail of `text` that some secret starts with (it may still complete). */
  private pendingTail(text: string): number {
    let longest = 0;
    for (const secret of this.secrets) {
      for (let k = Math.min(secret.length - 1, text.length); k > longest; k--) {
        if (text.charCodeAt(text.length - k) === secret.charCodeAt(0) && secret.startsWith(text.slice(text.length - k))) {
          longest = k;
          break;
        }
      }
    }
    return longest;
  }
}
