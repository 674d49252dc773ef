/** Values the Node-side globalSetup files hand to the tests inside workerd (`inject(...)`). */
declare module "vitest" {
  export interface ProvidedContext {
    /** Streamable HTTP URL of the server-everything reference server (test/support/mcp-everything-server.mjs). */
    mcpEverythingUrl: string;
    /** Root URL of the hostile MCP server (test/support/mcp-hostile-server.mjs); the path picks its behaviour. */
    mcpHostileUrl: string;
    /** Root URL of the fake provider server (test/support/fake-providers.mjs), e.g. "http://127.0.0.1:41235". */
    fakeProviderUrl: string;
  }
}

export {};
