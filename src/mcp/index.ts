/** The public surface of src/mcp: MCP servers at the edge (issue 10). Other folders import from here. */
export * from "./mcp-names";
export * from "./mcp-config";
export * from "./mcp-errors";
export * from "./mcp-pagination";
export * from "./mcp-results";
export * from "./mcp-deadline";
export * from "./mcp-response-bound";
export * from "./mcp-client";
export * from "./mcp-declarations";
export * from "./mcp-api-files";
export * from "./bounded-api-header";
export { boundText, commentLines, jsdocBlock, MAX_DESCRIPTION_CHARS } from "./mcp-jsdoc";
export { schemaType } from "./mcp-schema-types";
export * from "./mcp-servers";
export * from "./private-address";
