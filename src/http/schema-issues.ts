import type { z } from "@hono/zod-openapi";
import { GatewayError } from "../errors";
import { formatPath } from "./json-body";

/**
 * The one place a zod issue becomes the HTTP contract's `invalid_request { message, path }`. The
 * request schemas (request-schemas.ts) carry the contract's messages, written with `{path}` where
 * the field's path goes (a schema is shared by many positions: `clientTools[3].name`); the issue's
 * own path fills it in. What zod words itself (unknown keys) is reworded here.
 */
type Issue = z.core.$ZodIssue;

/** A refinement's issue reported at the contract's path spelled out (e.g. `mcpServers.odd name.url`). */
export type PathOverride = { path: string };

/** `clientTools[0]` + `name` → `clientTools[0].name`; `""` is the value itself. */
function joinPath(base: string, rest: string): string {
  if (base === "") return rest;
  if (rest === "") return base;
  return rest.startsWith("[") ? base + rest : `${base}.${rest}`;
}

function render(issue: Issue, base: string, prefix: readonly PropertyKey[]): { path: string; message: string } {
  const segments = [...prefix, ...issue.path].map((s) => (typeof s === "symbol" ? String(s) : s));
  const at = joinPath(base, formatPath(segments));
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    // The field itself, joined as written: the contract names `odd key`, not `["odd key"]`.
    const path = at === "" ? key : `${at}.${key}`;
    const own = issue.message.startsWith("Unrecognized key") ? `unknown field ${key}` : issue.message;
    return { path, message: own.replaceAll("{path}", at).replaceAll("{key}", key) };
  }
  if (issue.code === "invalid_union") {
    // The option whose type the value has speaks (an array of bad parts names the part); none: the union's own message.
    const option = issue.errors.find((errors) => errors.length > 0 && !(errors[0]!.code === "invalid_type" && errors[0]!.path.length === 0));
    if (option) return render(firstIssue(option), base, segments);
  }
  if (issue.code === "custom") {
    // A refinement's message may name user text: it is built by its own function, never a template.
    const params = (issue.params ?? {}) as Partial<PathOverride> & { say?: (at: string) => string };
    return { path: params.path ?? at, message: params.say ? params.say(at) : issue.message };
  }
  return { path: at, message: issue.message.replaceAll("{path}", at) };
}

function startsWith(path: readonly PropertyKey[], prefix: readonly PropertyKey[]): boolean {
  return prefix.length <= path.length && prefix.every((s, i) => path[i] === s);
}

/**
 * The issue the contract reports: the first, except that an object's unknown keys are reported
 * before its fields' problems (the order the hand-written checks had).
 */
function firstIssue(issues: readonly Issue[]): Issue {
  const first = issues[0]!;
  return issues.find((i) => i.code === "unrecognized_keys" && startsWith(first.path, i.path)) ?? first;
}

/** The contract's refusal for a failed parse; `base`: where the value sits in the body (`clientTools[0]`). */
export function requestError(error: z.ZodError, base = ""): GatewayError {
  const { path, message } = render(firstIssue(error.issues), base, []);
  return new GatewayError("invalid_request", message, path);
}

/**
 * Checks a request value against its schema; a failure throws the contract's 400. Callers build
 * what they pass on from the value itself (zod's output copies objects; a client's schema object
 * is kept as it came).
 */
export function checkRequest(schema: z.ZodType, value: unknown, base = ""): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw requestError(parsed.error, base);
}
