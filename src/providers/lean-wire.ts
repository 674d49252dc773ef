import { APICallError, EmptyResponseBodyError } from "@ai-sdk/provider";
import { VERSION as PROVIDER_UTILS_VERSION, getRuntimeEnvironmentUserAgent, secureJsonParse } from "@ai-sdk/provider-utils";
import type { ProviderApi } from "../config";

/**
 * Sending a model request ourselves (lean-chat-request.ts builds it) the
 * way the AI SDK's `postJsonToApi` does, and failing the way it fails: every failure is the error
 * the SDK would have thrown (its APICallError, the abort, the raw network error), so
 * toProviderError stays the one mapping to a ProviderError and the codes, messages, statuses and
 * retry-after hints do not change with the switch (test/unit/providers/lean-chat-request.test.ts).
 */

/** One request as the SDK would send it: POST, these headers, this JSON text. */
export type WireRequest = { url: string; headers: Record<string, string>; body: string };

/**
 * The user-agent suffix each SDK package adds (`ai-sdk-openai/<VERSION>`...). Written here, not
 * imported, so a call never evaluates the provider packages; a version bump that changes them
 * fails the request comparison tests.
 */
const SDK_AGENT: Record<ProviderApi, string> = { "openai-completions": "ai-sdk-openai/4.0.118", "anthropic-messages": "ai-sdk-anthropic/4.0.105" };

/**
 * The SDK's headers: the wire's own (key, version), the package's user-agent suffix, then
 * postToApi's content type, its own suffix and the runtime's user agent; lower-cased names in the
 * order `Headers` iterates them (sorted), as `withUserAgentSuffix` returns them.
 */
export function wireHeaders(api: ProviderApi, own: Record<string, string>): Record<string, string> {
  // The same for every call of a model (its key and version): built once, each call given its own copy.
  const key = JSON.stringify([api, own]);
  let built = builtHeaders.get(key);
  if (!built) {
    const headers = new Headers(own);
    headers.set("content-type", "application/json");
    const agent = [SDK_AGENT[api], `ai-sdk-provider-utils/${PROVIDER_UTILS_VERSION}`, getRuntimeEnvironmentUserAgent()].filter(Boolean).join(" ");
    headers.set("user-agent", agent);
    built = Object.fromEntries(headers.entries());
    if (builtHeaders.size >= BUILT_HEADERS_KEPT) builtHeaders.delete(builtHeaders.keys().next().value!);
    builtHeaders.set(key, built);
  }
  return { ...built };
}

/** Header sets kept (one per model key and wire in use; the oldest goes first). */
const BUILT_HEADERS_KEPT = 32;
const builtHeaders = new Map<string, Record<string, string>>();

/**
 * The JSON text of an object: `head`'s members (JSON.stringify's, in its key order), then the
 * `raw` members, each already JSON text (absent: left out, as JSON.stringify leaves out undefined).
 * The same text JSON.stringify gives for the whole object, without serializing again the parts a
 * call already holds as text (the tool definitions of a turn, the messages of earlier rounds).
 */
export function jsonWithRaw(head: Record<string, unknown>, raw: ReadonlyArray<readonly [key: string, json: string | undefined]>): string {
  const open = JSON.stringify(head);
  let text = open.slice(0, -1);
  let empty = open === "{}";
  for (const [key, json] of raw) {
    if (json === undefined) continue;
    text += `${empty ? "" : ","}${JSON.stringify(key)}:${json}`;
    empty = false;
  }
  return `${text}}`;
}

/** How a wire format's error body names its message (the SDK's error schema and `errorToMessage`). */
export type ErrorMessageOf = (data: unknown) => string | undefined;

/**
 * POSTs `request` through the call's fetch (observed-fetch.ts: observer, byte count, bound, claim).
 * Resolves with a 2xx answer; rejects as `postToApi` does: a non-2xx answer as its APICallError
 * (message from the error body, else the status text), a network failure as `handleFetchError`
 * leaves it, an abort as the abort.
 */
export async function sendWireRequest(
  fetch: typeof globalThis.fetch,
  request: WireRequest,
  signal: AbortSignal,
  messageOf: ErrorMessageOf,
): Promise<Response> {
  try {
    const response = await fetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal });
    if (!response.ok) throw await failedAnswer(response, request.url, messageOf);
    return response;
  } catch (error) {
    throw fetchError(error, request.url);
  }
}

/** A 2xx answer without a body, as the SDK's event-stream handler fails on it. */
export function emptyBodyError(response: Response, url: string): APICallError {
  return new APICallError({
    message: "Failed to process successful response",
    cause: new EmptyResponseBodyError({}),
    statusCode: response.status,
    url,
    responseHeaders: Object.fromEntries(response.headers),
    requestBodyValues: undefined,
  });
}

/** createJsonErrorResponseHandler, and postToApi's wrapping of a failure to read the error body. */
async function failedAnswer(response: Response, url: string, messageOf: ErrorMessageOf): Promise<unknown> {
  const responseHeaders = Object.fromEntries(response.headers);
  const base = { url, requestBodyValues: undefined, statusCode: response.status, responseHeaders };
  let responseBody: string;
  try {
    responseBody = await response.text();
  } catch (error) {
    if (isAbortError(error) || APICallError.isInstance(error)) return error;
    return new APICallError({ ...base, message: "Failed to process error response", cause: error });
  }
  let message: string | undefined;
  if (responseBody.trim() !== "") {
    try {
      message = messageOf(secureJsonParse(responseBody));
    } catch {
      // Not JSON, or a prototype key: the status text, as the SDK's handler falls back to.
    }
  }
  return new APICallError({ ...base, message: message ?? response.statusText, responseBody });
}

const FETCH_FAILED = ["fetch failed", "failed to fetch"];
const NETWORK_CODES = new Set([
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** handleFetchError: what postToApi throws for an error of the request (the message toProviderError shows depends on it). */
function fetchError(error: unknown, url: string): unknown {
  if (isAbortError(error)) return error;
  if (error instanceof TypeError && FETCH_FAILED.includes(error.message.toLowerCase())) {
    const cause = error.cause as { message?: string } | undefined;
    if (cause != null)
      return new APICallError({ message: `Cannot connect to API: ${cause.message}`, cause, url, requestBodyValues: undefined, isRetryable: true });
  }
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) {
      if (APICallError.isInstance(error)) return error;
      return new APICallError({
        message: `Cannot connect to API: ${error instanceof Error ? error.message : (current as Error).message}`,
        cause: error,
        url,
        requestBodyValues: undefined,
        isRetryable: true,
      });
    }
    current = current.cause;
  }
  return error;
}

function isAbortError(error: unknown): boolean {
  return (
    (error instanceof Error || (typeof DOMException === "function" && error instanceof DOMException)) &&
    (error.name === "AbortError" || error.name === "ResponseAborted" || error.name === "TimeoutError")
  );
}
