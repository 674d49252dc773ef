/**
 * The MCP TypeScript SDK (and the zod it validates with), loaded on first use. Its modules build
 * hundreds of zod schemas and, through `client/index.js`, Ajv when they are evaluated: tens of
 * milliseconds of CPU that every isolate would pay at startup, though most never speak MCP.
 * Every import of the SDK's runtime code in src/mcp goes through here (types stay `import type`),
 * so the bundler keeps it behind a lazy initializer that only `loadMcpSdk()` runs.
 *
 * `loadedMcpSdk()` answers without loading: an error can only be one of the SDK's classes once
 * the SDK is loaded, so classification (mcp-errors.ts) checks its classes only then.
 */
import type { ZodType } from "zod/v4";

async function importSdk() {
  const [client, http, cfworker, types, z, zodCore] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/validation/cfworker"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("zod/v4"),
    import("zod/v4/core"),
  ]);
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    CfWorkerJsonSchemaValidator: cfworker.CfWorkerJsonSchemaValidator,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    ZodError: zodCore.$ZodError,
    /** `tools/call` result, blocks kept whole (see mcp-client.ts); top-level keys are projected later. */
    LooseCallToolResultSchema: types.ResultSchema.extend({
      content: z.array(z.looseObject({ type: z.string() })).default([]),
      structuredContent: z.record(z.string(), z.unknown()).optional(),
      isError: z.boolean().optional(),
    }) satisfies ZodType,
  };
}

export type McpSdk = Awaited<ReturnType<typeof importSdk>>;

let sdk: McpSdk | undefined;
let loading: Promise<McpSdk> | undefined;

/** The SDK, loading it on first use; concurrent first calls share one load. */
export async function loadMcpSdk(): Promise<McpSdk> {
  if (sdk) return sdk;
  loading ??= importSdk().then((loaded) => (sdk = loaded));
  try {
    return await loading;
  } catch (error) {
    loading = undefined; // a later call retries
    throw error;
  }
}

/** The SDK if something has loaded it, without loading it. */
export function loadedMcpSdk(): McpSdk | undefined {
  return sdk;
}
