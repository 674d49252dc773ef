import type { McpServerSdk } from "./mcp-server-sdk";

/**
 * The schema `tools/call` is registered with. The SDK parses a request against the schema of its
 * handler before anything else and answers a failure with zod's issue list as `-32603 Internal
 * error`; a malformed call is the client's mistake, so it is answered here as `-32602 Invalid
 * params` naming the field, in one sentence. Shaped as the SDK takes a zod 3 schema (a `shape`
 * holding the method literal, and `safeParse`, whose error it throws as it is); a well-formed
 * call is then parsed by the SDK's own schema.
 */
export function callToolRequests(sdk: McpServerSdk): McpServerSdk["CallToolRequestSchema"] {
  const { CallToolRequestSchema, McpError, ErrorCode } = sdk;
  const refused = (message: string) => ({ success: false as const, error: new McpError(ErrorCode.InvalidParams, message) });
  const schema = {
    shape: { method: { _def: { value: "tools/call" } } },
    safeParse(data: unknown) {
      const problem = callProblem(data);
      if (problem) return refused(problem);
      const parsed = CallToolRequestSchema.safeParse(data);
      if (parsed.success) return parsed;
      const issue = parsed.error.issues[0];
      return refused(`tools/call ${issue ? `${fieldName(issue.path)}: ${issue.message}` : "request is malformed"}`);
    },
  };
  return schema as unknown as McpServerSdk["CallToolRequestSchema"];
}

/** What is wrong with a `tools/call` request's params, in the fields a client fills in (undefined: nothing here). */
function callProblem(data: unknown): string | undefined {
  const params = isObject(data) ? data.params : undefined;
  if (!isObject(params)) return "tools/call params must be an object with the tool's name and arguments";
  if (typeof params.name !== "string") return "tools/call params.name must be a string (the tool's name)";
  const args = params.arguments;
  if (args !== undefined && !isObject(args)) return `tools/call params.arguments must be an object, not ${kindOf(args)}`;
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

function fieldName(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i > 0 ? "." : ""}${String(p)}`)).join("") || "request";
}
