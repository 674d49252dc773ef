/**
 * Failures of MCP operations, as data (STYLE 5: the client never throws to its callers).
 *
 * CODES:
 * - `mcp_invalid_config`: the server's settings are unusable (URL, header, missing secret);
 *   nothing was sent.
 * - `mcp_unreachable`: the request did not get an MCP answer: network failure (fetch rejected),
 *   an HTTP error status, the connection closed, or the connection was already closed by us.
 * - `mcp_timeout`: the operation's deadline passed (ours, or the SDK's request timeout).
 * - `mcp_aborted`: the caller's AbortSignal fired.
 * - `mcp_protocol_error`: the server answered but not as MCP says: a JSON-RPC error to any
 *   request other than `tools/call`, a malformed or unexpected response, a listing past its
 *   caps, structured content that breaks the tool's declared output schema.
 * - `mcp_tool_error`: the server answered `tools/call` with a JSON-RPC error (unknown tool,
 *   invalid arguments, …). A result with `isError: true` is NOT a failure: it is a result.
 *
 * Classification is by class and code (our fetch wrapper's `McpNetworkError` and
 * `McpResponseTooLarge`, the SDK's `McpError`, `StreamableHTTPError` and validation errors),
 * never by message text; an error of any other class gets a fixed message. The SDK's classes are
 * checked only once it is loaded (mcp-sdk.ts): before that, nothing can have thrown one. Messages name the server and
 * the operation; text from the server is bounded, stripped of control characters and of every
 * header value (4 characters or more) and the URL we sent (a server may echo a token back);
 * no stacks.
 */
import { MASK } from "../observability";
import { loadedMcpSdk, type McpSdk } from "./mcp-sdk";

export type McpFailureCode = "mcp_invalid_config" | "mcp_unreachable" | "mcp_timeout" | "mcp_aborted" | "mcp_protocol_error" | "mcp_tool_error";

export type McpFailure = { ok: false; code: McpFailureCode; message: string };

/** Outcome of one operation: its value, or a failure as data. */
export type McpOutcome<T> = { ok: true; value: T } | McpFailure;

/** Longest piece of server-provided text kept in a failure message. */
export const MAX_SERVER_TEXT_CHARS = 300;

/** A fetch made by the transport rejected: the network, not the server, failed. */
export class McpNetworkError extends Error {}

/** An answer ran past MAX_MCP_RESPONSE_BYTES (mcp-response-bound.ts); its message names the bound. */
export class McpResponseTooLarge extends Error {}

/** Who and what, for messages: `MCP server "everything": tools/call "echo"`. */
export type McpOperation = { server: string; what: string };

/** Server-provided text made safe for a message: secrets redacted, control characters gone, bounded. */
export function sanitizeServerText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(MASK);
  out = redactFragments(out, secrets);
  out = out
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, " ")
    .replace(/ {2,}/g, " ")
    .trim();
  return out.length > MAX_SERVER_TEXT_CHARS ? out.slice(0, MAX_SERVER_TEXT_CHARS) + "…" : out;
}

/**
 * A server may echo part of a credential ("bad token abc123…"): every run of text that shares
 * SECRET_FRAGMENT_CHARS or more consecutive characters with a secret is masked too. Secrets are
 * split on whitespace and URL punctuation first, and auth-scheme words are skipped, so "Bearer" in
 * prose stays readable.
 * Bound: O(text × fragments), both small (the text is cut at MAX_SERVER_TEXT_CHARS later).
 */
const SECRET_FRAGMENT_CHARS = 6;
/** Words of a credential that are not secret (auth schemes). */
const PUBLIC_PARTS = new Set(["bearer", "basic", "token"]);

function redactFragments(text: string, secrets: readonly string[]): string {
  const grams = new Set<string>();
  for (const secret of secrets) {
    for (const part of secret.split(/[\s&=?/]+/)) {
      if (part.length < SECRET_FRAGMENT_CHARS || PUBLIC_PARTS.has(part.toLowerCase())) continue;
      for (let i = 0; i + SECRET_FRAGMENT_CHARS <= part.length && grams.size < 20_000; i++) grams.add(part.slice(i, i + SECRET_FRAGMENT_CHARS));
    }
  }
  if (grams.size === 0 || text.length < SECRET_FRAGMENT_CHARS) return text;
  const masked = new Uint8Array(text.length);
  for (let i = 0; i + SECRET_FRAGMENT_CHARS <= text.length; i++) {
    if (grams.has(text.slice(i, i + SECRET_FRAGMENT_CHARS))) masked.fill(1, i, i + SECRET_FRAGMENT_CHARS);
  }
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (!masked[i]) out += text[i];
    else if (i === 0 || !masked[i - 1]) out += MASK;
  }
  return out;
}

export function mcpFailure(code: McpFailureCode, op: McpOperation, detail: string): McpFailure {
  return { ok: false, code, message: `MCP server "${op.server}": ${op.what} ${detail}` };
}

/**
 * Turn anything the SDK rejected with into a failure. `isToolCall` selects `mcp_tool_error` for
 * JSON-RPC errors answering `tools/call`.
 */
export function classifyMcpError(error: unknown, op: McpOperation, secrets: readonly string[], isToolCall = false): McpFailure {
  const text = (e: { message: string }) => sanitizeServerText(e.message, secrets);
  // Our own text and workerd's: neither is quoted (workerd's may carry an internal error reference).
  if (error instanceof McpNetworkError) return mcpFailure("mcp_unreachable", op, "failed: the server could not be reached");
  if (error instanceof McpResponseTooLarge) return mcpFailure("mcp_protocol_error", op, `failed: ${error.message}`);
  const sdk = loadedMcpSdk();
  if (sdk) {
    const classified = classifySdkError(sdk, error, op, text, isToolCall);
    if (classified) return classified;
  }
  if (error instanceof SyntaxError) return mcpFailure("mcp_protocol_error", op, "failed: the answer is not valid JSON");
  // Anything else was thrown by the runtime or a library: its text (workerd's "internal error;
  // reference = …" among them) is no business of the guest's.
  return mcpFailure("mcp_protocol_error", op, "failed: the answer could not be read as MCP");
}

function classifySdkError(
  { McpError, ErrorCode, StreamableHTTPError, ZodError }: McpSdk,
  error: unknown,
  op: McpOperation,
  text: (e: { message: string }) => string,
  isToolCall: boolean,
): McpFailure | undefined {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return mcpFailure("mcp_timeout", op, "timed out");
    if (error.code === ErrorCode.ConnectionClosed) return mcpFailure("mcp_unreachable", op, "failed: the connection closed");
    // The SDK writes the code into the message: "MCP error -32602: …".
    return mcpFailure(isToolCall ? "mcp_tool_error" : "mcp_protocol_error", op, `failed: ${text(error)}`);
  }
  if (error instanceof StreamableHTTPError) {
    if (typeof error.code === "number" && error.code >= 100) {
      return mcpFailure("mcp_unreachable", op, `failed: the server answered HTTP ${error.code}`);
    }
    return mcpFailure("mcp_protocol_error", op, `failed: ${text(error)}`);
  }
  // The SDK's validation of a malformed answer says what is wrong with it (server data, sanitized).
  if (error instanceof ZodError) return mcpFailure("mcp_protocol_error", op, `failed: the answer is not valid MCP (${text(error)})`);
  return undefined;
}
