import type { ConfigResult } from "./gateway-config";
import { parseGatewayConfig } from "./parse-gateway-config";

/** The bundled demo configuration, used when `CODEMODE_CONFIG` is unset or empty: code mode on. */
export const DEFAULT_GATEWAY_CONFIG = Object.freeze({ tools: Object.freeze({ codeMode: true }) });

const ENV_VAR = "CODEMODE_CONFIG";

let cached: { source: string | undefined; result: ConfigResult } | undefined;

/**
 * The gateway configuration for this Worker: `env.CODEMODE_CONFIG` (a JSON string) when set, replacing the
 * bundled default entirely; otherwise `DEFAULT_GATEWAY_CONFIG`. A blank string counts as unset.
 *
 * Invalid JSON is an error with path `"CODEMODE_CONFIG"` (the message does not quote the text, which may
 * contain secrets). The last result is memoized per source string, so calling this per request is cheap;
 * the returned config is shared and must not be mutated.
 */
export function loadGatewayConfig(env: { CODEMODE_CONFIG?: string }): ConfigResult {
  const text = env.CODEMODE_CONFIG;
  const source = typeof text === "string" && text.trim() !== "" ? text : undefined;
  if (cached !== undefined && cached.source === source) return cached.result;
  const result = source === undefined ? parseGatewayConfig(DEFAULT_GATEWAY_CONFIG) : parseSource(source);
  cached = { source, result };
  return result;
}

function parseSource(source: string): ConfigResult {
  let document: unknown;
  try {
    document = JSON.parse(source);
  } catch {
    return { ok: false, error: { message: `${ENV_VAR} is not valid JSON`, path: ENV_VAR } };
  }
  const result = parseGatewayConfig(document);
  if (!result.ok && result.error.path === "") {
    return { ok: false, error: { message: `${ENV_VAR} must be a JSON object`, path: ENV_VAR } };
  }
  return result;
}
