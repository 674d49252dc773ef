import type { CodeModeLanguage, CodeModeResult } from "../code-mode";
import type { BridgeCounts, CellFields, CellTool } from "./log";

/**
 * What the session object learns about one exec/wait while answering it. Filled in as the
 * call goes: `ranAt` and `before` when it leaves the session's queue, `runId` once a wait
 * has claimed its run.
 */
export type CellTrace = {
  tool: CellTool;
  requestId?: string;
  /** performance.now() when the call reached the session object. */
  arrivedAt: number;
  /** performance.now() when the cell started running (after the session's queue). */
  ranAt?: number;
  /** The turn's bridge counters when the cell started. */
  before?: BridgeCounts;
  runId?: string;
  language?: CodeModeLanguage;
};

const encoder = new TextEncoder();

export function cellTrace(tool: CellTool, requestId: string | undefined, language?: CodeModeLanguage): CellTrace {
  return { tool, requestId, arrivedAt: performance.now(), ...(language ? { language } : {}) };
}

/** The language an exec asks for (or the turn's default); undefined when the input names none we run. */
export function execLanguage(input: unknown, fallback: CodeModeLanguage): CodeModeLanguage | undefined {
  const asked = input !== null && typeof input === "object" ? (input as { language?: unknown }).language : undefined;
  if (asked === undefined) return fallback;
  return asked === "javascript" || asked === "typescript" ? asked : undefined;
}

function delta(before: BridgeCounts | undefined, after: BridgeCounts): BridgeCounts {
  const b = before ?? after;
  return { search: after.search - b.search, describe: after.describe - b.describe, call: after.call - b.call };
}

/**
 * The `cell` record of one answered exec/wait: outcome, code, timings, the bridge calls it
 * made (the telemetry's running counters minus those at its start), and sizes. Nothing of
 * the code, the value, the output or any tool input.
 */
export function cellFields(
  turn: { tenantId: string; sessionId: string; turnId: string },
  trace: CellTrace,
  result: CodeModeResult,
  extra: { snapshotBytes?: number } = {},
): CellFields {
  const now = performance.now();
  return {
    tool: trace.tool,
    requestId: trace.requestId,
    tenant: turn.tenantId,
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    runId: result.status === "waiting" ? result.runId : trace.runId,
    outcome: result.status,
    errorCode: result.status === "failed" ? result.code : undefined,
    reason: result.status === "waiting" ? result.reason : undefined,
    durationMs: Math.round(now - trace.arrivedAt),
    queuedMs: trace.ranAt === undefined ? undefined : Math.round(trace.ranAt - trace.arrivedAt),
    bridge: delta(trace.before, result.telemetry.counters),
    resultBytes: encoder.encode(JSON.stringify(result)).length,
    snapshotBytes: extra.snapshotBytes,
    pendingToolCalls: result.status === "waiting" ? (result.pendingToolCalls?.length ?? 0) : undefined,
    language: trace.language,
  };
}
