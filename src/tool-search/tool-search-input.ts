import { MAX_SEARCH_QUERY_CHARS } from "../limits";

/**
 * Inputs of the Tool Search control tools, checked before anything runs. Failures are messages
 * for the model (`invalid_input`), naming the field and what it takes.
 */
export type ToolSearchInput =
  | { tool: "tool_search_code"; code: string }
  /** Continue a cell parked on client calls (the caller, after posting their results; never the model's schema). */
  | { tool: "tool_search_code"; runId: string }
  | { tool: "tool_search"; query: string; limit: number | null }
  | { tool: "tool_describe"; id: string }
  | { tool: "tool_call"; id: string; args: Record<string, unknown> };

const FIELDS: Record<ToolSearchInput["tool"], readonly string[]> = {
  tool_search_code: ["code"],
  tool_search: ["query", "limit"],
  tool_describe: ["id"],
  tool_call: ["id", "args"],
};

export function isToolSearchControl(name: string): name is ToolSearchInput["tool"] {
  return Object.hasOwn(FIELDS, name);
}

export function parseToolSearchInput(
  tool: ToolSearchInput["tool"],
  raw: unknown,
): { ok: true; input: ToolSearchInput } | { ok: false; message: string } {
  const known = FIELDS[tool];
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return bad(`${tool} input must be an object: { ${known.join(", ")} }`);
  const input = raw as Record<string, unknown>;
  // `runId` continues a parked tool_search_code cell: the caller's field, not in the model's schema.
  const extra = Object.keys(input).find((k) => !known.includes(k) && !(tool === "tool_search_code" && k === "runId"));
  if (extra !== undefined) return bad(`unknown ${tool} field ${JSON.stringify(extra)}; ${tool} takes ${known.join(", ")}`);
  switch (tool) {
    case "tool_search_code": {
      if ("runId" in input) {
        if ("code" in input) return bad("tool_search_code takes { code } (a new cell) or { runId } (continue a parked one), not both");
        if (typeof input.runId !== "string" || input.runId === "") return bad("tool_search_code runId must be the runId of a waiting result");
        return { ok: true, input: { tool, runId: input.runId } };
      }
      if (typeof input.code !== "string" || input.code.trim() === "")
        return bad("tool_search_code needs non-empty code (a JavaScript function body)");
      return { ok: true, input: { tool, code: input.code } };
    }
    case "tool_search": {
      if (typeof input.query !== "string") return bad("tool_search query must be a string");
      if (input.query.length > MAX_SEARCH_QUERY_CHARS)
        return bad(`tool_search query is longer than ${MAX_SEARCH_QUERY_CHARS} characters; describe the tool in a few words`);
      const limit = input.limit ?? null;
      if (limit !== null && (typeof limit !== "number" || !Number.isFinite(limit))) return bad("tool_search limit must be a number");
      return { ok: true, input: { tool, query: input.query, limit } };
    }
    case "tool_describe":
    case "tool_call": {
      if (typeof input.id !== "string" || input.id === "") return bad(`${tool} id must be a tool id from tool_search`);
      if (tool === "tool_describe") return { ok: true, input: { tool, id: input.id } };
      const args = input.args ?? {};
      if (args === null || typeof args !== "object" || Array.isArray(args)) return bad("tool_call args must be an object (the tool's input)");
      return { ok: true, input: { tool, id: input.id, args: args as Record<string, unknown> } };
    }
  }
}

function bad(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

/** A requested limit clamped into [1, max]; absent → the default. */
export function searchLimit(limit: number | null, defaults: { searchDefaultLimit: number; maxSearchLimit: number }): number {
  if (limit === null) return defaults.searchDefaultLimit;
  return Math.min(Math.max(1, Math.floor(limit)), defaults.maxSearchLimit);
}
