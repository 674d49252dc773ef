/** Tool Search (seed 004): the compact catalog surface for runs without code mode. */
export {
  HIT_DESCRIPTION_CHARS,
  toolSearchId,
  ToolSearchCatalog,
  type ToolSearchSource,
  type ToolSearchHit,
  type ToolSearchDescription,
} from "./tool-search-catalog";
export { isToolSearchControl, parseToolSearchInput, searchLimit, type ToolSearchInput } from "./tool-search-input";
export { TOOL_SEARCH_CONTROLS, toolSearchSurface } from "./tool-search-surface";
