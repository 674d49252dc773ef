import { statusOf, type ErrorCode } from "../errors";

/**
 * The error envelopes of the two formats, so each SDK raises its own error class (chosen by the
 * status) with a message it can read. The status is the gateway's for the code (src/errors); the
 * gateway's code travels as OpenAI's `code` and in the message of Anthropic's.
 */

/** OpenAI's `{ error: { message, type, param, code } }`. */
export function openaiErrorBody(code: ErrorCode, message: string, param?: string) {
  const status = statusOf(code);
  const type =
    code === "quota_exceeded"
      ? "insufficient_quota"
      : status === 401
        ? "authentication_error"
        : status === 429
          ? "rate_limit_error"
          : status >= 500
            ? "server_error"
            : "invalid_request_error";
  const shown = code === "not_found" && param === "model" ? "model_not_found" : code === "rate_limited" ? "rate_limit_exceeded" : code;
  return { error: { message, type, param: param ?? null, code: shown } };
}

/** Anthropic's `{ type: "error", error: { type, message } }`. */
export function anthropicErrorBody(code: ErrorCode, message: string) {
  const status = statusOf(code);
  const type =
    status === 400 || status === 409
      ? "invalid_request_error"
      : status === 401
        ? "authentication_error"
        : status === 404
          ? "not_found_error"
          : status === 413
            ? "request_too_large"
            : status === 429
              ? "rate_limit_error"
              : status === 503
                ? "overloaded_error"
                : "api_error";
  return { type: "error", error: { type, message: `${message} (${code})` } };
}

/** The envelope of a facade route (by path), or undefined for the gateway's own routes. */
export function facadeErrorBody(path: string, code: ErrorCode, message: string, param?: string): object | undefined {
  if (path === "/v1/chat/completions" || path === "/v1/models") return openaiErrorBody(code, message, param);
  if (path === "/v1/messages") return anthropicErrorBody(code, message);
  return undefined;
}
