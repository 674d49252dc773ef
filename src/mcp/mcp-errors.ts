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
 * Classification is by class and code (our fetch wrapper's `McpNetworkError`, the SDK's
 * `McpError` and `StreamableHTTPError`), never by message text. Messages name the server and
 * the operation; text from the server is bounded, stripped of control characters and of every
 * header value (4 characters or more) and the URL we sent (a server may echo a token back);
 * no stacks.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export type McpFailureCode = "mcp_invalid_config" | "mcp_unreachable" | "mcp_timeout" | "mcp_aborted" | "mcp_protocol_error" | "mcp_tool_error";

export type McpFailure = { ok: false; code: McpFailureCode; message: string };

/** Outcome of one operation: its value, or a failure as data. */
export type McpOutcome<T> = { ok: true; value: T } | McpFailure;

/** Longest piece of server-provided text kept in a failure message. */
export const MAX_SERVER_TEXT_CHARS = 300;

/** A fetch made by the transport rejected: the network, not the server, failed. */
export class McpNetworkError extends Error {}

/** Who and what, for messages: `MCP server "everything": tools/call "echo"`. */
export type McpOperation = { server: string; what: string };

/** Server-provided text made safe for a message: secrets redacted, control characters gone, bounded. */
export function sanitizeServerText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  out = out
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, " ")
    .replace(/ {2,}/g, " ")
    .trim();
  return out.length > MAX_SERVER_TEXT_CHARS ? out.slice(0, MAX_SERVER_TEXT_CHARS) + "…" : out;
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
  if (error instanceof McpNetworkError) return mcpFailure("mcp_unreachable", op, `failed: the server could not be reached (${text(error)})`);
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
  // Zod parse errors of a malformed response, transport errors without a status, anything else.
  const detail = error instanceof Error ? text(error) : "unexpected failure";
  return mcpFailure("mcp_protocol_error", op, `failed: the answer is not valid MCP (${detail})`);
}
