import type { CodemodeConfig } from "./codemode-config";
import type { ConfigResult } from "./gateway-config";
import { parseJsonc } from "./jsonc";
import { overlayConfig } from "./overlay-config";
import { parseGatewayConfig } from "./parse-gateway-config";
import { isRecord } from "./config-validation-error";

/** The bottom layer of every configuration: code mode on. A layer above turns it off only by saying so. */
export const DEFAULT_GATEWAY_CONFIG = Object.freeze({ tools: Object.freeze({ codeMode: true }) });

const ENV_VAR = "CODEMODE_CONFIG";

let cached: { source: string | undefined; module: CodemodeConfig | undefined; result: ConfigResult } | undefined;

/**
 * The gateway configuration for this Worker, in three layers, each laid over the one below key by key
 * (overlay-config.ts): `DEFAULT_GATEWAY_CONFIG`, then the config module the Worker entry passes to
 * `createGateway({ config })`, then `env.CODEMODE_CONFIG` (JSONC text: comments and trailing commas
 * allowed). A blank var counts as unset. So a pasted `{"tools":{"toolSearch":true}}` keeps code mode on;
 * `{"tools":{"codeMode":false}}` turns it off.
 *
 * Text that does not parse is an error with path `"CODEMODE_CONFIG"` naming the line and column (the
 * message does not quote the text, which may contain secrets). The last result is memoized per source
 * string and module, so calling this per request is cheap; the returned config is shared and must not
 * be mutated.
 */
export function loadGatewayConfig(env: { CODEMODE_CONFIG?: string }, module?: CodemodeConfig): ConfigResult {
  const text = env.CODEMODE_CONFIG;
  const source = typeof text === "string" && text.trim() !== "" ? text : undefined;
  if (cached !== undefined && cached.source === source && cached.module === module) return cached.result;
  const base = overlayConfig(DEFAULT_GATEWAY_CONFIG, module ?? {});
  const result = source === undefined ? parseGatewayConfig(base) : parseSource(source, base);
  cached = { source, module, result };
  return result;
}

/**
 * Checks a config module on its own (over the defaults), as `createGateway` does at start-up: the
 * error, if any, is the module's, with its key path.
 */
export function checkConfigModule(module: CodemodeConfig): ConfigResult {
  if (!isRecord(module)) return { ok: false, error: { message: "the config module must be an object", path: "" } };
  return parseGatewayConfig(overlayConfig(DEFAULT_GATEWAY_CONFIG, module));
}

function parseSource(source: string, base: unknown): ConfigResult {
  const parsed = parseJsonc(source);
  if (!parsed.ok) {
    const where = `${parsed.reason} at line ${parsed.line}, column ${parsed.column}`;
    return { ok: false, error: { message: `${ENV_VAR} is not valid JSON: ${where}`, path: ENV_VAR } };
  }
  if (!isRecord(parsed.value)) return { ok: false, error: { message: `${ENV_VAR} must be a JSON object`, path: ENV_VAR } };
  return parseGatewayConfig(overlayConfig(base, parsed.value));
}
