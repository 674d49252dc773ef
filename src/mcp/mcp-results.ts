/**
 * What MCP answers become in the guest (seed 002, "Declared output contracts"). Pure.
 *
 * RULES:
 * - `tools/call` → `McpToolResult`: the `content` blocks as the server sent them (block
 *   `annotations`, block-level `_meta` and any other block key kept), plus top-level
 *   `structuredContent` and `isError` when the server provided them. Every other top-level key —
 *   `_meta` first of all (private app metadata) — is dropped. `isError: true` is a result the
 *   guest inspects, not a failure.
 * - Resources and prompts keep their native shapes, with only these top-level keys:
 *   `resources/list` → `{ resources, nextCursor? }`, `resources/read` → `{ contents }`,
 *   `prompts/list` → `{ prompts, nextCursor? }`, `prompts/get` → `{ messages, description? }`.
 * - Every projection is a fresh JSON copy: what reaches the guest is JSON-safe by construction
 *   (answers arrive as JSON, but the SDK's parsing may add `undefined` fields) and shares
 *   nothing with the client's objects.
 */

export type McpToolResult = { content: unknown[]; structuredContent?: unknown; isError?: boolean };
export type McpResourcesListResult = { resources: unknown[]; nextCursor?: string };
export type McpResourcesReadResult = { contents: unknown[] };
export type McpPromptsListResult = { prompts: unknown[]; nextCursor?: string };
export type McpPromptsGetResult = { messages: unknown[]; description?: string };

type Raw = Record<string, unknown>;

function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function projectToolResult(raw: Raw): McpToolResult {
  const out: McpToolResult = { content: list(raw.content) };
  if (raw.structuredContent !== undefined) out.structuredContent = raw.structuredContent;
  if (typeof raw.isError === "boolean") out.isError = raw.isError;
  return jsonCopy(out);
}

/** `{ nextCursor }` when the page has one, else nothing. */
function cursorOf(raw: Raw): { nextCursor?: string } {
  return typeof raw.nextCursor === "string" ? { nextCursor: raw.nextCursor } : {};
}

export function projectResourcesList(raw: Raw): McpResourcesListResult {
  return jsonCopy({ resources: list(raw.resources), ...cursorOf(raw) });
}

export function projectResourcesRead(raw: Raw): McpResourcesReadResult {
  return jsonCopy({ contents: list(raw.contents) });
}

export function projectPromptsList(raw: Raw): McpPromptsListResult {
  return jsonCopy({ prompts: list(raw.prompts), ...cursorOf(raw) });
}

export function projectPromptsGet(raw: Raw): McpPromptsGetResult {
  return jsonCopy({ messages: list(raw.messages), ...(typeof raw.description === "string" ? { description: raw.description } : {}) });
}
