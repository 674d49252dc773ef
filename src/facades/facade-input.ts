import { GatewayError } from "../errors";

/** A request field the facade refuses: `invalid_request` naming the client's own path (`param`). */
export const fail = (param: string, message: string): never => {
  throw new GatewayError("invalid_request", message, param);
};

/** A plain JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * An optional number field (sampling, token bounds): undefined when absent or null, refused when
 * another type (the range is checked where `/chat` checks it, naming the client's field).
 */
export function optionalNumber(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  return typeof v === "number" ? v : fail(field, `${field} must be a number`);
}

/** `stream`: true, false or absent; anything else is refused rather than read as false. */
export function streamFlag(body: Record<string, unknown>): boolean {
  const v = body.stream;
  if (v === undefined || v === null) return false;
  return typeof v === "boolean" ? v : fail("stream", "stream must be true or false");
}

/** The `/chat` sampling fields of a facade body: `temperature`, `top_p`, and the first token bound of `maxTokens` present. */
export function samplingFields(body: Record<string, unknown>, maxTokens: readonly string[]) {
  const temperature = optionalNumber(body, "temperature");
  const topP = optionalNumber(body, "top_p");
  let maxOutputTokens: number | undefined;
  for (const field of maxTokens) maxOutputTokens ??= optionalNumber(body, field);
  return {
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { topP } : {}),
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
  };
}
