import { fnv1a64 } from "../catalog";
import type { CodeModeOutput, CodeModePendingToolCall, CodeModeResult } from "../code-mode";
import type { ParkedRunState } from "../snapshot-store";
import { boundedJson } from "../code-mode";

/**
 * What a waiting result tells its caller: the outstanding tool calls, and only the output
 * an earlier result did not already carry (seed: "an unchanged cumulative summary is not
 * repeated"; a changed reservation produces a replacement summary instead).
 */
/**
 * Outstanding calls for a waiting result. Client inputs were bounded when called (the client
 * needs them whole); a host tool's input is informational and shown bounded by maxOutputBytes.
 */
export function pendingCalls(pending: ParkedRunState["pending"], maxOutputBytes: number): CodeModePendingToolCall[] {
  const out: CodeModePendingToolCall[] = [];
  for (const p of pending) {
    if (p.kind === "client") out.push({ callId: p.callId, tool: p.tool, input: p.input });
    else if (p.kind === "tool") out.push({ callId: p.callId, tool: p.tool, input: JSON.parse(boundedJson(p.input ?? null, maxOutputBytes)) });
  }
  return out;
}

export function deliveredMark(output: CodeModeOutput[] | undefined): ParkedRunState["delivered"] {
  const items = output ?? [];
  return { count: items.length, digest: fnv1a64(JSON.stringify(items)) };
}

/** Output is delivered incrementally: drop items an earlier result already carried, when unchanged. */
export function sliceDelivered(
  output: CodeModeOutput[] | undefined,
  delivered: ParkedRunState["delivered"] | undefined,
): CodeModeOutput[] | undefined {
  if (!output || !delivered || delivered.count === 0) return output;
  if (output.length < delivered.count) return output;
  if (fnv1a64(JSON.stringify(output.slice(0, delivered.count))) !== delivered.digest) return output; // replacement summary
  return output.slice(delivered.count);
}

export function withIncrementalOutput(result: CodeModeResult, delivered: ParkedRunState["delivered"] | undefined): CodeModeResult {
  if (!delivered || !result.output) return result;
  const output = sliceDelivered(result.output, delivered);
  const { output: _drop, ...rest } = result;
  return output && output.length > 0 ? { ...rest, output } : (rest as CodeModeResult);
}
