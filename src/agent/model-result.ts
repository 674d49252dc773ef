import { OutputBudget, utf8ByteLength, type CodeModeOutput } from "../code-mode";
import { BYTES_PER_TOKEN, MAX_PERSISTED_RESULT_BYTES, MAX_UNTRUSTED_RESULT_BYTES, RESULT_CONTEXT_SHARE } from "../limits";
import { UNTRUSTED_OVERHEAD_BYTES, wrapUntrusted } from "../tools";

/**
 * The model-facing text of one outer tool result (`exec`, `wait`, Tool Search, a direct tool).
 * Seed 002, "Output API": model-facing results also fit the model's per-result context and
 * persistence limits; the COMPLETE envelope (status, runId, pending calls, diagnostics,
 * telemetry, JSON punctuation, and the untrusted wrapper when there is one) is reserved first,
 * then `output` and `value`/`error` are projected again from the cell's bounded result with the
 * same rules as maxOutputBytes (output/value halves, truncation markers, `[error truncated]`).
 * Network-derived results keep the smaller untrusted cap. The cell's own byte budget and the
 * guest's view are untouched: this only shapes what the model reads.
 *
 * BOUND: `bytes(text) <= limit` whenever the limit leaves room for the envelope plus the
 * projection's fixed overhead (1 KiB); a model whose context cannot hold even that gets the
 * envelope with a minimal projection.
 */
export type ResultLimits = { maxBytes: number; untrustedMaxBytes: number };

export function modelResultLimits(contextWindow: number): ResultLimits {
  const maxBytes = Math.max(2048, Math.min(MAX_PERSISTED_RESULT_BYTES, Math.floor(contextWindow * BYTES_PER_TOKEN * RESULT_CONTEXT_SHARE)));
  return { maxBytes, untrustedMaxBytes: Math.min(maxBytes, MAX_UNTRUSTED_RESULT_BYTES) };
}

export type ModelFacing = { text: string; bytes: number; limit: number; reprojected: boolean; untrusted: boolean };

const MIN_PROJECTION_BYTES = 1024;
/** Keys and punctuation the projected fields add back to the envelope (`,"output":`, `,"value":`). */
const FIELD_SLACK_BYTES = 64;

export function modelFacingResult(result: unknown, limits: ResultLimits, untrusted?: { source: string }): ModelFacing {
  const limit = untrusted ? limits.untrustedMaxBytes : limits.maxBytes;
  const room = untrusted ? limit - UNTRUSTED_OVERHEAD_BYTES : limit;
  let text = JSON.stringify(result) ?? "null";
  let reprojected = false;
  if (utf8ByteLength(text) > room && isProjectable(result)) {
    text = reproject(result, room);
    reprojected = true;
  }
  if (untrusted) text = wrapUntrusted(text, untrusted.source);
  return { text, bytes: utf8ByteLength(text), limit, reprojected, untrusted: untrusted !== undefined };
}

type Projectable = { status: string; value?: unknown; error?: unknown; output?: CodeModeOutput[] } & Record<string, unknown>;

function isProjectable(result: unknown): result is Projectable {
  return typeof result === "object" && result !== null && typeof (result as { status?: unknown }).status === "string";
}

function reproject(result: Projectable, room: number): string {
  const { value, error, output, ...envelope } = result;
  const budget = Math.max(MIN_PROJECTION_BYTES, room - utf8ByteLength(JSON.stringify(envelope)) - FIELD_SLACK_BYTES);
  const projection = new OutputBudget(budget);
  for (const item of output ?? []) {
    if (item.type === "text") projection.pushText(item.text);
    else projection.pushJson(JSON.stringify(item.value) ?? "null");
  }
  const projected =
    typeof error === "string"
      ? projection.failed(error)
      : "value" in result
        ? projection.completed(JSON.stringify(value))
        : { output: projection.pending() };
  // Same key order as the cell's result: status first, telemetry last.
  const { telemetry, ...head } = envelope as Record<string, unknown>;
  return JSON.stringify({ ...head, ...projected, ...(telemetry !== undefined ? { telemetry } : {}) });
}
