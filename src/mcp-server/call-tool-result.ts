import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * A tool's answer as MCP content: one text block with its JSON, the same object as
 * `structuredContent`, and `isError` when it failed. For `exec`/`wait` that is the
 * CodeModeResult (`completed`, `waiting` with its runId, or `failed` with its error code);
 * a direct-only tool answers `{ status, value | error }` the same way. A failed cell is a
 * result, never a JSON-RPC error (the same rule as the HTTP route's 200).
 */
export function callToolResult(result: unknown): CallToolResult {
  const body = result !== null && typeof result === "object" && !Array.isArray(result) ? (result as Record<string, unknown>) : { value: result };
  return { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body, isError: body.status === "failed" };
}
