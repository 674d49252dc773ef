import { logRecord } from "../observability";
import type { TurnSpec } from "../turns";
import type { TranscriptPort } from "./ports";

/**
 * A client's result arrived for a call the gateway handed out: on record in the turn's trajectory
 * (`client_result`) and as the call's one `tool_call` log record (written now, when it ended).
 */
export function recordClientResult(
  d: { spec: TurnSpec; transcript: TranscriptPort; now(): number },
  call: { callId: string; parentCallId: string; tool: string; source: "direct" | "client"; ok: boolean; decision: string; startedAt?: number },
): void {
  const now = d.now();
  d.transcript.event(d.spec.turnId, now, "client_result", { invocationId: call.callId, ok: call.ok });
  logRecord("tool_call", {
    tenant: d.spec.tenantId,
    sessionId: d.spec.sessionId,
    turnId: d.spec.turnId,
    parentCallId: call.parentCallId,
    callId: call.callId,
    tool: call.tool,
    source: call.source,
    outcome: call.ok ? "ok" : "error",
    decision: call.decision,
    ...(call.startedAt !== undefined ? { durationMs: Math.max(0, now - call.startedAt) } : {}),
  });
}
