/**
 * The MCP SDK's server half, loaded on the first `/mcp` request: evaluating the SDK builds
 * hundreds of zod schemas, CPU that isolates serving only /v1 and /chat would otherwise pay at
 * startup (src/mcp/mcp-sdk.ts is the client half). Only `import type` of the SDK elsewhere here.
 */
async function importServerSdk() {
  const [server, transport, types, cfworker] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("@modelcontextprotocol/sdk/validation/cfworker"),
  ]);
  return {
    Server: server.Server,
    WebStandardStreamableHTTPServerTransport: transport.WebStandardStreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    CfWorkerJsonSchemaValidator: cfworker.CfWorkerJsonSchemaValidator,
  };
}

export type McpServerSdk = Awaited<ReturnType<typeof importServerSdk>>;

let loading: Promise<McpServerSdk> | undefined;

/** The server SDK, loading it on first use; concurrent first calls share one load, a failed one is retried. */
export function loadMcpServerSdk(): Promise<McpServerSdk> {
  loading ??= importServerSdk().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
