import { HttpError } from "./http-error";

/**
 * Tokens come from the `GATEWAY_TOKENS` secret: a JSON map token → tenant id. With no
 * token configured every `/v1` request is refused (local dev gets one from `.dev.vars`).
 */
let cached: { raw: string; map: Map<string, string> } | undefined;

export function parseGatewayTokens(raw: string | undefined): Map<string, string> {
  if (!raw) return new Map();
  if (cached?.raw === raw) return cached.map;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HttpError("invalid_config", "GATEWAY_TOKENS is not valid JSON", "GATEWAY_TOKENS");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new HttpError("invalid_config", "GATEWAY_TOKENS must be a JSON object mapping token to tenant id", "GATEWAY_TOKENS");
  }
  const map = new Map<string, string>();
  for (const [token, tenant] of Object.entries(parsed)) {
    if (typeof tenant !== "string" || tenant.length === 0 || token.length < 8) {
      throw new HttpError("invalid_config", "GATEWAY_TOKENS entries must be token (8+ chars) → non-empty tenant id", "GATEWAY_TOKENS");
    }
    map.set(token, tenant);
  }
  cached = { raw, map };
  return map;
}

/** The tenant for an `Authorization: Bearer …` header, or a 401. */
export function authenticate(header: string | undefined, tokensRaw: string | undefined): string {
  const tokens = parseGatewayTokens(tokensRaw);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (tokens.size === 0) throw new HttpError("unauthorized", "no gateway token is configured (set GATEWAY_TOKENS)");
  if (!match) throw new HttpError("unauthorized", "missing bearer token");
  const tenant = tokens.get(match[1]!);
  if (tenant === undefined) throw new HttpError("unauthorized", "invalid bearer token");
  return tenant;
}
