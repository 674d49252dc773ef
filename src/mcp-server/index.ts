/** The public surface of src/mcp-server: code mode served as an MCP server at `/mcp`. */
export { callToolResult } from "./call-tool-result";
export { handleMcpRequest } from "./mcp-endpoint";
export { mcpCodemodeSessionId, formatMcpSessionId, parseMcpSessionId, type McpSessionRef } from "./mcp-session-id";
