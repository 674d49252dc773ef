import { TRUNCATION_GUIDANCE, utf8Prefix } from "./output-budget";

/**
 * One value for the guest (a nested tool result, a description, a pending call's input),
 * bounded by maxOutputBytes on its own. Rule: an oversized value becomes the seed's truncation
 * marker (`truncated`, UTF-8-safe `prefix`, `omittedBytes`, guidance), a successful partial
 * result, unless an output contract forbids that shape (then the call fails, naming the limit).
 * Bound: the marker itself is at most maxOutputBytes.
 */

/** A bounded result as the bridge carries it: JSON text for the guest, or an error message. */
export type BoundedResult = { ok: true; text: string } | { ok: false; message: string };

const encoder = new TextEncoder();

function truncationMarker(text: string, bytes: number, maxBytes: number): string {
  const prefix = utf8Prefix(text, Math.max(0, maxBytes - 512));
  return JSON.stringify({ truncated: true, prefix, omittedBytes: bytes - encoder.encode(prefix).length, guidance: TRUNCATION_GUIDANCE });
}

/**
 * Each nested tool result is bounded separately by maxOutputBytes: an oversized one reaches
 * the guest as the seed's truncation marker (a successful partial result), not whole.
 */
export function boundedJson(value: unknown, maxBytes: number): string {
  const text = JSON.stringify(value) ?? "null";
  const bytes = encoder.encode(text).length;
  return bytes <= maxBytes ? text : truncationMarker(text, bytes, maxBytes);
}

/**
 * A tool result for the guest, bounded by maxOutputBytes. The size cap must not break an output
 * contract: a tool with a declared output schema promised its shape (the quick index may have told
 * the model it gets an array), so an oversized result fails the call with a catchable error naming
 * the limit instead of arriving as the truncation marker. Undeclared outputs keep the seed's marker.
 */
export function boundedResult(toolName: string, value: unknown, maxBytes: number, declaredOutput: boolean): BoundedResult {
  const text = JSON.stringify(value) ?? "null";
  const bytes = encoder.encode(text).length;
  if (bytes <= maxBytes) return { ok: true, text };
  if (declaredOutput) {
    return {
      ok: false,
      message:
        `${toolName} returned ${bytes} bytes, over maxOutputBytes (${maxBytes}); its declared output cannot be truncated — ` +
        "ask for less (narrower arguments, fewer items, a page at a time)",
    };
  }
  return { ok: true, text: truncationMarker(text, bytes, maxBytes) };
}
