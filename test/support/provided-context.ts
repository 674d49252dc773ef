/** Values the Node-side globalSetup files hand to the tests inside workerd (`inject(...)`). */
declare module "vitest" {
  export interface ProvidedContext {
    /** Streamable HTTP URL of the server-everything reference server (test/support/mcp-everything-server.mjs). */
    mcpEverythingUrl: string;
  }
}

export {};
