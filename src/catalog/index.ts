export { buildCatalog, CODE_MODE_CONTROL_TOOLS, CONTROL_TOOL_NAMES, type CatalogInput } from "./build-catalog";
export { CATALOGS, CatalogCache } from "./catalog-cache";
export { assignCallableNames, isJsSafeName, normalizeToolName, OBJECT_PROTOCOL_NAMES, SPECIALIZED_GLOBALS } from "./callable-names";
export { Catalog, guestDescription, guestMetadata } from "./catalog";
export { opaqueToolId } from "./opaque-id";
export { inputHint, outputHint } from "./schema-hints";
export { SearchIndex } from "./search-index";
export { stem, tokenize } from "./search-tokens";
export { isToolAllowed, type ToolPolicy } from "./tool-policy";
export type {
  CatalogEntry,
  CatalogProjection,
  ClientToolSpec,
  McpEntryInfo,
  McpServerTools,
  NamespaceEntry,
  ToolCatalogMetadata,
  ToolOrigin,
} from "./types";
export { mcpToolName, mcpGuestKey } from "./build-catalog";

export { fnv1a64 } from "./opaque-id";

export { type ResolvedTool } from "./types";
