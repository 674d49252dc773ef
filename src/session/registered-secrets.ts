import type { GatewayConfig } from "../config";
import type { TurnSpec } from "../turns";
import { sentSecretList } from "../observability";

const MIN_SECRET_CHARS = 8;

/**
 * The secret values this session could ever echo into stored or logged text (seed 002, "Source
 * in session history": registered secrets are masked): every Worker secret a provider or MCP
 * server references (`env:NAME`), the gateway's bearer tokens, and the header values of the
 * turn's own MCP servers. Values shorter than 8 characters are not masked (they would mask words).
 */
export function registeredSecrets(env: Record<string, unknown>, config: GatewayConfig | undefined, spec: TurnSpec | undefined): readonly string[] {
  const out = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === "string" && v.length >= MIN_SECRET_CHARS) out.add(v);
  };
  const ref = (v: string | undefined) => {
    if (v?.startsWith("env:")) add(env[v.slice(4)]);
  };
  for (const p of Object.values(config?.providers ?? {})) ref(p.apiKey);
  for (const s of Object.values(config?.mcpServers ?? {})) for (const h of Object.values(s.headers ?? {})) ref(h);
  if (typeof env.GATEWAY_TOKENS === "string") for (const token of gatewayTokens(env.GATEWAY_TOKENS)) add(token);
  for (const s of spec?.mcp?.servers ?? [])
    for (const h of Object.values(s.headers ?? {})) typeof h === "string" && h.startsWith("env:") ? ref(h) : add(h);
  // Each with the forms a peer may echo (a header's token without its scheme); longest first, so
  // a secret that contains another is masked whole. Asked for several times per tool call with the
  // same values: the list is kept for the last set seen.
  // JSON, not a join: a separator a value may hold would let two different sets share a list.
  const key = JSON.stringify([...out]);
  if (key !== last.key) last = { key, list: sentSecretList(out) };
  return last.list;
}

let last: { key: string; list: readonly string[] } = { key: "", list: [] };
let tokens: { raw: string; names: string[] } = { raw: "", names: [] };

/** The bearer tokens of GATEWAY_TOKENS (parsed once per value). */
function gatewayTokens(raw: string): string[] {
  if (raw !== tokens.raw) {
    let names: string[] = [];
    try {
      names = Object.keys(JSON.parse(raw) as Record<string, unknown>);
    } catch {
      // An invalid GATEWAY_TOKENS is reported by the HTTP edge; nothing to mask here.
    }
    tokens = { raw, names };
  }
  return tokens.names;
}
