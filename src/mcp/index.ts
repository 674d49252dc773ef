/** The public surface of src/mcp: MCP servers at the edge (issue 10). Other folders import from here. */
export { MCP_NAMESPACE_MEMBERS, normalizeMcpName, assignMcpNames, type McpNameKind } from "./mcp-names";
export {
  validateServerUrl,
  resolveHeaders,
  resolveMcpTarget,
  mcpServerProblem,
  MCP_SERVER_KEYS,
  type McpServerConfig,
  type McpConfigOrigin,
  type McpTarget,
  type McpTargetResult,
  type McpHeadersResult,
} from "./mcp-config";
export {
  MAX_SERVER_TEXT_CHARS,
  McpNetworkError,
  McpResponseTooLarge,
  sanitizeServerText,
  mcpFailure,
  classifyMcpError,
  type McpFailureCode,
  type McpFailure,
  type McpOutcome,
  type McpOperation,
} from "./mcp-errors";
export { MCP_TOOL_LIST_LIMITS, collectPages, type McpPage, type McpListLimits, type McpCollected } from "./mcp-pagination";
export {
  projectToolResult,
  projectResourcesList,
  projectResourcesRead,
  projectPromptsList,
  projectPromptsGet,
  type McpToolResult,
  type McpResourcesListResult,
  type McpResourcesReadResult,
  type McpPromptsListResult,
  type McpPromptsGetResult,
} from "./mcp-results";
export { withDeadline, type McpCallOptions } from "./mcp-deadline";
export { McpResponseBound } from "./mcp-response-bound";
export { loadMcpSdk, loadedMcpSdk } from "./mcp-sdk";
export { jsonBytes, McpClient, sessionEnded, type McpFetch, type McpConnectOptions, type McpToolInfo, type McpListedTools } from "./mcp-client";
export { serverIdentity } from "./mcp-identity";
export { McpListingCache, MCP_LISTINGS, MCP_LISTING_CACHE_ENTRIES, MCP_LISTING_CACHE_BYTES, type CachedListing } from "./mcp-listing-cache";
export { McpSessionPool, MCP_MAX_SESSIONS, MCP_SESSION_IDLE_MS, type McpOperationKind, type McpSessionPoolOptions } from "./mcp-session-pool";
export {
  MAX_TOOL_DECLARATION_CHARS,
  MAX_DTS_FILE_CHARS,
  MCP_INDEX_DTS,
  serverDtsPath,
  renderMcpIndexDts,
  renderToolDeclaration,
  renderServerNamespace,
  renderServerDts,
  type McpDeclaredTool,
  type McpDeclaredServer,
} from "./mcp-declarations";
export {
  declareMcpServers,
  buildApiFiles,
  readApiFile,
  listApiFiles,
  apiHeader,
  type ApiFileInfo,
  type ApiFile,
  type ApiFileTable,
  type ApiReadResult,
  type ApiListResult,
  type McpApiHeader,
  type McpApiHeaderResult,
} from "./mcp-api-files";
export { boundText, commentLines, jsdocBlock } from "./mcp-jsdoc";
export { boundedApiHeader, type McpOmittedSchema, type McpApiHeaderOmitted } from "./bounded-api-header";
export { schemaType } from "./mcp-schema-types";
export {
  MCP_LIST_TIMEOUT_MS,
  MCP_CALL_TIMEOUT_MS,
  MCP_TOOL_LIST_TTL_MS,
  McpServers,
  type McpServerRecord,
  type McpServerListing,
  type McpServersOptions,
} from "./mcp-servers";
export { privateAddress } from "./private-address";
