import { formatPath } from "../http";
import type { McpServerSdk } from "./mcp-server-sdk";

type ZodLike = {
  safeParse(data: unknown): { success: true; data: unknown } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
};

/**
 * The schema a request handler is registered with. The SDK parses a request against its handler's
 * schema before anything else and answers a failure with zod's issue list as `-32603 Internal
 * error`; a malformed request is the client's mistake, so it is answered here as `-32602 Invalid
 * params` naming the field, in one sentence (`precheck` first: the fields a client fills in, in
 * words of its own). Shaped as the SDK takes a zod 3 schema (a `shape` holding the method literal,
 * and `safeParse`, whose error it throws as it is); a well-formed request is parsed by `schema`.
 */
export function checkedRequests<S extends ZodLike>(
  sdk: McpServerSdk,
  schema: S,
  method: string,
  precheck?: (data: unknown) => string | undefined,
): S {
  const { McpError, ErrorCode } = sdk;
  const refused = (message: string) => ({ success: false as const, error: new McpError(ErrorCode.InvalidParams, message) });
  const checked = {
    shape: { method: { _def: { value: method } } },
    safeParse(data: unknown) {
      const problem = precheck?.(data);
      if (problem) return refused(`${method} ${problem}`);
      const parsed = schema.safeParse(data);
      if (parsed.success) return parsed;
      const issue = parsed.error.issues[0];
      return refused(`${method} ${issue ? `${fieldName(issue.path)}: ${issue.message}` : "request is malformed"}`);
    },
  };
  return checked as unknown as S;
}

/** What is wrong with a `tools/call` request's params, in the fields a client fills in (undefined: nothing here). */
export function callProblem(data: unknown): string | undefined {
  const params = isObject(data) ? data.params : undefined;
  if (!isObject(params)) return "params must be an object with the tool's name and arguments";
  if (typeof params.name !== "string") return "params.name must be a string (the tool's name)";
  const args = params.arguments;
  if (args !== undefined && !isObject(args)) return `params.arguments must be an object, not ${kindOf(args)}`;
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/** The issue's field as the request body's own path (`params.task.ttl`), as /v1 names fields. */
function fieldName(path: readonly PropertyKey[]): string {
  return formatPath(path.map((p) => (typeof p === "number" ? p : String(p)))) || "request";
}
