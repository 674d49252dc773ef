/** The public surface of src/turns (other folders import from here). */
export { renderQuickIndex } from "./quick-index";
export { cellEnvironment, isRestartSafe, execCell, callDirectTool, type ToolRouteResult, type TurnDeps } from "./cell-environment";
export { defaultExecLanguage, modelSurface, type ModelTool, type SurfaceShape } from "./surface";
export { turnTelemetry } from "./telemetry";
export { executeEntry, turnHandlers, type ToolResolver, type NestedCallDeps } from "./bridge-handlers";
export { clientResultSettlement, admitClientCall, afterClientResult } from "./client-tool-policy";
export { MAX_CALLED_TOOLS, recordCalled, type TurnToolSearch, type TurnSpec, type TurnCounters, type StoredMcpServer } from "./turn-spec";
export { checkSurface } from "./surface-check";
export { catalogJson, sameCatalogJson } from "./catalog-json";
export {
  runToolSearchCode,
  callToolSearchTool,
  toolSearchCellSpec,
  toolSearchCellEnvironment,
  toolSearchEnd,
  type ClientCallWaiting,
  type ToolCallClientHandOut,
} from "./tool-search-run";
export { MCP_SERVER_OPS, mcpRuntime, mcpToolDefinition, mcpServerOp, mcpOpDefinition, type McpRuntime } from "./mcp-runtime";
export { discoverMcp, planTurn, surfaceSize, turnSurface, type OpenTurnRequest, type SurfaceSize } from "./turn-opening";
export { nestedCall, type NestedCall, type ActivitySink } from "./nested-activity";
