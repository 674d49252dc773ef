/**
 * `tools.toolSearch` (seed 004): the compact catalog surface for runs where code mode is not engaged.
 *
 * - `mode: "code"` (default) exposes one tool, `tool_search_code`: a short JavaScript body with
 *   `openclaw.tools.search/describe/call`, run in the QuickJS sandbox within `codeTimeoutMs`.
 * - `mode: "tools"` exposes `tool_search`, `tool_describe` and `tool_call`.
 *
 * Defaults are seed 004's example values. Numbers are rounded down and clamped, never refused:
 * `codeTimeoutMs` to code mode's `timeoutMs` range, both limits to [1, 50] (the `catalog.search`
 * cap), and `searchDefaultLimit` then to `maxSearchLimit`.
 */
export type ToolSearchMode = "code" | "tools";

export const TOOL_SEARCH_MODES: readonly ToolSearchMode[] = Object.freeze(["code", "tools"]);

export const TOOL_SEARCH_NUMERIC_KEYS = ["codeTimeoutMs", "searchDefaultLimit", "maxSearchLimit"] as const;
export type ToolSearchNumericKey = (typeof TOOL_SEARCH_NUMERIC_KEYS)[number];

/** One `toolSearch` block (global or per agent) after validation: absent fields inherit. */
export type ToolSearchSettings = { enabled?: boolean; mode?: ToolSearchMode } & Partial<Record<ToolSearchNumericKey, number>>;

export type ResolvedToolSearchOptions = { enabled: boolean; mode: ToolSearchMode } & Record<ToolSearchNumericKey, number>;

export const TOOL_SEARCH_DEFAULTS: Readonly<ResolvedToolSearchOptions> = Object.freeze({
  enabled: false,
  mode: "code",
  codeTimeoutMs: 10_000,
  searchDefaultLimit: 8,
  maxSearchLimit: 20,
});

export const TOOL_SEARCH_LIMITS: Readonly<Record<ToolSearchNumericKey, Readonly<{ min: number; max: number }>>> = Object.freeze({
  codeTimeoutMs: Object.freeze({ min: 100, max: 60_000 }),
  searchDefaultLimit: Object.freeze({ min: 1, max: 50 }),
  maxSearchLimit: Object.freeze({ min: 1, max: 50 }),
});
