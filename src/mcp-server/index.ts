/** The public surface of src/mcp-server: code mode served as an MCP server at `/mcp`. */
export * from "./call-tool-result";
export * from "./mcp-endpoint";
export * from "./mcp-session-id";
