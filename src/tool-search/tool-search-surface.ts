import type { JsonSchema } from "../tools";
import type { ToolSearchMode } from "../config";

/** A tool definition exactly as a provider would receive it (same shape as src/turns' ModelTool). */
type SurfaceTool = { name: string; description: string; parameters: JsonSchema };

/** The model-visible control tools of each Tool Search mode (seed 004 "Modes"). */
export const TOOL_SEARCH_CONTROLS: Readonly<Record<ToolSearchMode, readonly string[]>> = Object.freeze({
  code: Object.freeze(["tool_search_code"]),
  tools: Object.freeze(["tool_search", "tool_describe", "tool_call"]),
});

const ID = { type: "string", description: "A tool id from search results (or the tool's exact name)." } as const;

/**
 * Tool Search's compact surface: one code tool with a short API contract, or three structured
 * tools. Schemas are flat (no oneOf/anyOf) so every provider accepts them. The catalog size is
 * the only thing about the catalog they say: no tool names, schemas or descriptions.
 */
export function toolSearchSurface(mode: ToolSearchMode, opts: { catalogSize: number; codeTimeoutMs: number; maxSearchLimit: number }): SurfaceTool[] {
  const size = `${opts.catalogSize} tool${opts.catalogSize === 1 ? "" : "s"}`;
  if (mode === "code") {
    return [
      {
        name: "tool_search_code",
        description:
          `Find and call this run's tools (${size}, not listed here) from a short JavaScript async function body; ` +
          "its return value is the result. API: await openclaw.tools.search(query, { limit }) -> [{ id, name, description, source }]; " +
          "await openclaw.tools.describe(id) -> { id, name, description, source, inputSchema, outputSchema? }; " +
          "await openclaw.tools.call(id, args) -> the tool's result (a failed call throws an Error you can catch). " +
          `console.log/warn/error add output lines. Nothing else exists: no imports, network, files or timers. Time limit ${opts.codeTimeoutMs} ms.`,
        parameters: {
          type: "object",
          properties: { code: { type: "string", description: "JavaScript function body using openclaw.tools; return the value you need." } },
          required: ["code"],
          additionalProperties: false,
        },
      },
    ];
  }
  return [
    {
      name: "tool_search",
      description: `Search this run's tools (${size}, not listed here) by what you need. Returns compact { id, name, description, source } hits; tool_describe an id for its input schema, then tool_call it.`,
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "What the tool should do, in a few words." },
          limit: { type: "integer", minimum: 1, maximum: opts.maxSearchLimit, description: "Maximum hits." },
        },
        required: ["query"],
        additionalProperties: false,
      },
    },
    {
      name: "tool_describe",
      description: "Full metadata of one tool from tool_search, including its exact input schema.",
      parameters: { type: "object", properties: { id: ID }, required: ["id"], additionalProperties: false },
    },
    {
      name: "tool_call",
      description: "Call one tool from tool_search with arguments matching its input schema; returns the tool's result.",
      parameters: {
        type: "object",
        properties: { id: ID, args: { type: "object", description: "The tool's input object." } },
        required: ["id"],
        additionalProperties: false,
      },
    },
  ];
}
