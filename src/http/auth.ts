import { GatewayError } from "../errors";
import { MIN_TOKEN_CHARS } from "../limits";

export type TokensResult = { ok: true; tokens: Map<string, string> } | { ok: false; message: string };

let cached: { raw: string | undefined; result: TokensResult } | undefined;

/**
 * Tokens come from the `GATEWAY_TOKENS` secret: a JSON map token → tenant id. With no token
 * configured every `/v1` request is refused with 401 (local dev gets one from `.dev.vars`).
 * A secret that is set but breaks a rule is a configuration error (reported on `/healthz` and
 * every request), never a per-request surprise. Messages name the rule and the entry's position,
 * never a token or tenant.
 * Memoized per secret text, valid or not.
 */
export function loadGatewayTokens(raw: string | undefined): TokensResult {
  if (cached !== undefined && cached.raw === raw) return cached.result;
  const result = parseTokens(raw);
  cached = { raw, result };
  return result;
}

function parseTokens(raw: string | undefined): TokensResult {
  const tokens = new Map<string, string>();
  if (raw === undefined || raw.trim() === "") return { ok: true, tokens };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, message: "not valid JSON" };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return { ok: false, message: "must be a JSON object mapping token to tenant id" };
  }
  let index = 0;
  for (const [token, tenant] of Object.entries(parsed)) {
    index++;
    // Entries are named by position only: /healthz is public, and neither tokens nor tenants are its business.
    const which = `entry ${index}`;
    if (token.length < MIN_TOKEN_CHARS) return { ok: false, message: `${which}: tokens must be at least ${MIN_TOKEN_CHARS} characters` };
    if (/\s/.test(token)) return { ok: false, message: `${which}: tokens cannot contain whitespace (a bearer header cannot carry it)` };
    if (typeof tenant !== "string" || tenant === "") return { ok: false, message: `${which}: the tenant id must be a non-empty string` };
    tokens.set(token, tenant);
  }
  return { ok: true, tokens };
}

/** The tenant for an `Authorization: Bearer …` header, or a 401 (a 500 when the secret is invalid). */
export function authenticate(header: string | undefined, tokensRaw: string | undefined): string {
  const loaded = loadGatewayTokens(tokensRaw);
  if (!loaded.ok) throw new GatewayError("invalid_config", `invalid GATEWAY_TOKENS: ${loaded.message}`, "GATEWAY_TOKENS");
  const { tokens } = loaded;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (tokens.size === 0) throw new GatewayError("unauthorized", "no gateway token is configured (set GATEWAY_TOKENS)");
  if (!match) throw new GatewayError("unauthorized", "missing bearer token");
  const tenant = tokens.get(match[1]!);
  if (tenant === undefined) throw new GatewayError("unauthorized", "invalid bearer token");
  return tenant;
}
