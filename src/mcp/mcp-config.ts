/**
 * One MCP server's connection settings, checked and resolved at the boundary (seed 002 / issue 10:
 * `mcpServers: { name: { url, headers? } }` per turn, or `mcp.servers` in gateway config).
 *
 * RULES:
 * - `url` is an absolute `http:` or `https:` URL without user name or password (a credential in
 *   a URL would leak wherever the URL goes; put it in a header).
 * - A header value `env:NAME` (NAME = `[A-Za-z_][A-Za-z0-9_]*`) is a reference to the Worker
 *   secret NAME; every other value is literal. References are honoured only for servers from
 *   gateway config (`origin: "gateway"`): a per-turn server names its own URL, so letting it
 *   reference secrets would let any API caller send any Worker secret to a host of its choice.
 * - Messages name the server, the header NAME and the secret NAME, never a header value or the
 *   URL (which may carry a token in its query).
 * - The resolved `McpTarget` holds secret values: keep it in memory for one request; never put
 *   it in storage, snapshots, logs or guest-visible data.
 */
import type { McpFailure } from "./mcp-errors";

/** As written in config or in a turn request. */
export type McpServerConfig = { url: string; headers?: Record<string, string> };

/** Where a server's settings came from: only gateway config may reference Worker secrets. */
export type McpConfigOrigin = "gateway" | "turn";

/** A server ready to connect to: validated URL and resolved header values (secrets included). */
export type McpTarget = { server: string; url: URL; headers: Record<string, string> };

export type McpTargetResult = { ok: true; target: McpTarget } | McpFailure;
export type McpHeadersResult = { ok: true; headers: Record<string, string> } | McpFailure;

const ENV_REF = /^env:(.*)$/s;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// RFC 9110 field-name: a token.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// RFC 9110 field-value: no CR, LF or NUL (Headers would throw on them, echoing the value).
const BAD_HEADER_VALUE = /[\r\n\0]/;

function invalid(server: string, message: string): McpFailure {
  return { ok: false, code: "mcp_invalid_config", message: `MCP server "${server}": ${message}` };
}

/** Check a server URL: absolute, http(s), no credentials. The message never repeats the URL. */
export function validateServerUrl(server: string, url: unknown): { ok: true; url: URL } | McpFailure {
  if (typeof url !== "string" || !URL.canParse(url)) return invalid(server, "url must be an absolute http(s) URL");
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return invalid(server, `url must use http or https, not ${JSON.stringify(parsed.protocol.slice(0, -1).slice(0, 20))}`);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return invalid(server, "url must not contain a user name or password; send credentials in a header");
  }
  return { ok: true, url: parsed };
}

/**
 * Resolve `env:NAME` header values against the Worker's `env` (secrets are string bindings).
 * A missing or non-string secret, a reference from a per-turn server, a malformed header name
 * or value: a failure naming the header and the secret, never a value.
 */
export function resolveHeaders(
  server: string,
  headers: Readonly<Record<string, string>> | undefined,
  env: Readonly<Record<string, unknown>>,
  origin: McpConfigOrigin,
): McpHeadersResult {
  const resolved: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!HEADER_NAME.test(name)) return invalid(server, `header name ${JSON.stringify(name.slice(0, 64))} is not a valid HTTP header name`);
    if (typeof value !== "string") return invalid(server, `header "${name}" must be a string`);
    const ref = ENV_REF.exec(value);
    if (!ref) {
      if (BAD_HEADER_VALUE.test(value)) return invalid(server, `header "${name}" contains a line break or NUL`);
      resolved[name] = value;
      continue;
    }
    const secret = ref[1]!;
    if (!SECRET_NAME.test(secret)) return invalid(server, `header "${name}": "env:" must be followed by a secret name ([A-Za-z_][A-Za-z0-9_]*)`);
    if (origin !== "gateway") {
      return invalid(
        server,
        `header "${name}" references the Worker secret ${secret}; "env:" references are allowed only in gateway config (mcp.servers), not in a turn's mcpServers`,
      );
    }
    const found = Object.hasOwn(env, secret) ? env[secret] : undefined;
    if (typeof found !== "string" || found === "") {
      return invalid(server, `header "${name}" references the Worker secret ${secret}, which is not set`);
    }
    if (BAD_HEADER_VALUE.test(found)) return invalid(server, `the Worker secret ${secret} (header "${name}") contains a line break or NUL`);
    resolved[name] = found;
  }
  return { ok: true, headers: resolved };
}

/** Validate the URL and resolve the headers of one configured server. */
export function resolveMcpTarget(
  server: string,
  config: McpServerConfig,
  env: Readonly<Record<string, unknown>>,
  origin: McpConfigOrigin,
): McpTargetResult {
  const url = validateServerUrl(server, config.url);
  if (!url.ok) return url;
  const headers = resolveHeaders(server, config.headers, env, origin);
  if (!headers.ok) return headers;
  return { ok: true, target: { server, url: url.url, headers: headers.headers } };
}

/** Server names: what `MCP.<identifier>` and tool names (`<server>__<tool>`) are made from. */
const SERVER_NAME = /^[^\u0000-\u001f\u007f]{1,64}$/;

/**
 * The shape check of one configured server, before anything connects (turn requests and gateway
 * config alike): a usable name, only `url` and `headers`, the URL and header rules above. Gateway
 * servers' `env:` references are checked for form only; the secret is looked up when used.
 * Returns the problem (`path` relative to the server) or undefined.
 */
/** The keys of one MCP server entry (`mcp.servers.<name>`, a turn's `mcpServers`). */
export const MCP_SERVER_KEYS: readonly string[] = ["url", "headers"];

export function mcpServerProblem(name: string, value: unknown, origin: McpConfigOrigin): { path?: string; message: string } | undefined {
  // No ":" (Tool Search ids are mcp:<server>:<tool>) and no "__" (catalog names are <server>__<tool>): both stay unambiguous.
  if (!SERVER_NAME.test(name) || name.includes("__") || name.includes(":")) {
    return { message: 'an MCP server name is 1-64 characters without control characters, ":" or "__"' };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { message: "must be an object { url, headers? }" };
  const v = value as Record<string, unknown>;
  for (const key of Object.keys(v))
    if (!MCP_SERVER_KEYS.includes(key)) return { path: key, message: `unknown key ${JSON.stringify(key)}; an MCP server takes url and headers` };
  const url = validateServerUrl(name, v.url);
  if (!url.ok) return { path: "url", message: url.message };
  if (v.headers !== undefined) {
    if (v.headers === null || typeof v.headers !== "object" || Array.isArray(v.headers))
      return { path: "headers", message: "must be an object of header name → string" };
    // Every reference resolves to a placeholder: only the form is checked here.
    const anySecret = new Proxy(
      {},
      { get: () => "placeholder", has: () => true, getOwnPropertyDescriptor: () => ({ value: "placeholder", configurable: true, enumerable: true }) },
    );
    const headers = resolveHeaders(name, v.headers as Record<string, string>, anySecret, origin);
    if (!headers.ok) return { path: "headers", message: headers.message };
  }
  return undefined;
}
