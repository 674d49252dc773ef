import { jsonTooDeep } from "../bridge";
import { MAX_JSON_DEPTH } from "../limits";
import { GatewayError } from "../errors";

type Segment = string | number;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `clientTools[0].parameters`, `value["a b"]`; `""` is the body itself. */
export function formatPath(segments: readonly Segment[]): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

/**
 * The request field that holds a too-deep value: the top-level key, or `key[i].field` for the
 * entries of a top-level list (`clientTools[0].parameters`). Deeper segments would only repeat
 * the nesting back to the client.
 */
function fieldOf(segments: readonly Segment[]): Segment[] {
  if (typeof segments[0] !== "string") return [];
  if (typeof segments[1] === "number" && typeof segments[2] === "string") return segments.slice(0, 3);
  return segments.slice(0, 1);
}

type Frame = { value: unknown; depth: number; key: Segment | undefined; parent: Frame | undefined };

function pathOf(frame: Frame): Segment[] {
  const out: Segment[] = [];
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) out.push(f.key);
  return out.reverse();
}

/**
 * Walks a parsed body without recursion (it may be nested arbitrarily deep) and returns a
 * problem: a container deeper than `MAX_JSON_DEPTH` (only looked for when `deep`), or a number
 * JSON.parse turned into ±Infinity (`1e400`), which would silently become `null`. A container's
 * own numbers are checked before its nested containers, so with several problems the one
 * reported is not necessarily the first in document order.
 */
function findProblem(root: unknown, deep: boolean): { kind: "deep" | "infinite"; path: Segment[] } | undefined {
  if (typeof root === "number") return Number.isFinite(root) ? undefined : { kind: "infinite", path: [] };
  if (root === null || typeof root !== "object") return undefined;
  // Only containers get a frame; scalars are checked where they sit.
  const stack: Frame[] = [{ value: root, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (deep && frame.depth > MAX_JSON_DEPTH) return { kind: "deep", path: pathOf(frame) };
    const v = frame.value as object;
    const keys: Segment[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    const children: Frame[] = [];
    for (const key of keys) {
      const child = (v as Record<string | number, unknown>)[key];
      if (typeof child === "number" && !Number.isFinite(child)) return { kind: "infinite", path: [...pathOf(frame), key] };
      if (child !== null && typeof child === "object") children.push({ value: child, depth: frame.depth + 1, key, parent: frame });
    }
    // Pushed in reverse so sibling containers are visited in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

/**
 * A request's body as text, read by `read`. A read that breaks off (the client closed the
 * connection before sending the bytes it announced) is the client's failure: 400
 * `invalid_request`, not an unhandled error logged as the gateway's. A TypeError (the body read
 * twice: a gateway bug) and the gateway's own refusals (a body over the limit) pass through.
 */
export async function readBodyText(read: () => Promise<string>): Promise<string> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof TypeError || error instanceof GatewayError) throw error;
    throw new GatewayError("invalid_request", "the request body could not be read whole: the connection closed before it ended");
  }
}

/**
 * Parse a request body at the edge. Anything the session object could not take whole is refused
 * here as 400 `invalid_request` with the path, never left to fail later as a 500: nesting deeper
 * than `MAX_JSON_DEPTH` (the RPC to the Durable Object serialises recursively and would overflow
 * its stack) and numbers outside the double range (`1e400` parses to Infinity, which JSON cannot
 * carry onward: it would arrive as `null`). An empty body is `undefined`.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new GatewayError("invalid_request", "body is not valid JSON", "");
  }
  // The linear text scan decides; the walk only locates the field for the message.
  const problem = located(value, jsonTooDeep(text));
  if (problem) throw new GatewayError("invalid_request", describe(problem.kind, problem.path || "body"), problem.path);
  return value;
}

/**
 * The same refusal for a value parsed elsewhere (the MCP SDK parses `/mcp` bodies itself): what
 * is wrong and where, under `root` (e.g. `arguments`), or undefined. Never recurses.
 */
export function jsonValueProblem(value: unknown, root: string): { message: string; path: string } | undefined {
  const problem = located(value, true);
  if (!problem) return undefined;
  const path = problem.path === "" ? root : problem.path.startsWith("[") ? root + problem.path : `${root}.${problem.path}`;
  return { message: describe(problem.kind, path), path };
}

/** The problem and the path to report: the request field for nesting, the exact spot for a number. */
function located(value: unknown, deep: boolean): { kind: "deep" | "infinite"; path: string } | undefined {
  const problem = findProblem(value, deep);
  if (!problem) return undefined;
  return { kind: problem.kind, path: formatPath(problem.kind === "deep" ? fieldOf(problem.path) : problem.path) };
}

function describe(kind: "deep" | "infinite", where: string): string {
  return kind === "deep"
    ? `${where} is nested deeper than ${MAX_JSON_DEPTH} levels`
    : `${where} is a number outside the range JSON values can carry (finite doubles only)`;
}
