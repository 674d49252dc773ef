import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { modelFacingResult } from "../agent";
import { MAX_UNTRUSTED_RESULT_BYTES } from "../limits";

/**
 * A tool's answer as MCP content: one text block with its JSON, the same object as
 * `structuredContent`, and `isError` when it failed. For `exec`/`wait` that is the
 * CodeModeResult (`completed`, `waiting` with its runId, or `failed` with its error code);
 * a direct-only tool answers `{ status, value | error }` the same way. A failed cell is a
 * result, never a JSON-RPC error (the same rule as the HTTP route's 200).
 */
export function callToolResult(result: unknown, untrusted = false): CallToolResult {
  const body = result !== null && typeof result === "object" && !Array.isArray(result) ? (result as Record<string, unknown>) : { value: result };
  const isError = body.status === "failed";
  if (!untrusted) return { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body, isError };
  // Network-derived (an MCP server, a network-derived plugin tool): the model reads it inside the
  // untrusted-content wrapper, within the wrapper's own limit; structured content cannot carry the
  // wrapper, so there is none.
  const facing = modelFacingResult(body, { maxBytes: MAX_UNTRUSTED_RESULT_BYTES, untrustedMaxBytes: MAX_UNTRUSTED_RESULT_BYTES }, { source: "mcp" });
  return { content: [{ type: "text", text: facing.text }], isError };
}
