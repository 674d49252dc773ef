import { recordClientResult } from "./client-result-record";
import { modelFacingResult, modelResultLimits, type ChatState, type DirectClientAdmission, type PendingClientCall } from "../agent";
import type { CatalogEntry } from "../catalog";
import { DEFAULT_CONTEXT_WINDOW } from "../providers";
import { toolSearchId } from "../tool-search";
import type { CallPolicy, ToolContext } from "../tools";
import { admitClientCall, clientResultSettlement, recordCalled, type TurnCounters, type TurnSpec } from "../turns";
import type { Settlement } from "../bridge";
import type { ClientResultBody } from "./session-rpc";
import type { OuterCallRecorder } from "./outer-call-recorder";
import type { TranscriptPort } from "./ports";

/*
 * A client tool the model called directly in /chat (code mode off) is an outer call like any
 * direct tool: on record under its gateway id (`ccall_…`) with its policy decision, counted in the
 * turn's telemetry, and logged as one `tool_call` record once its outcome is known (refused at
 * once, or when the caller posts its result).
 */

export type DirectClientDeps = {
  entry: CatalogEntry;
  counters: TurnCounters;
  saveCounters(): void;
  /** Writes this call's trajectory events (its policy decision arrives through the policy's `record`). */
  recorder: OuterCallRecorder;
  policy: CallPolicy;
  context: ToolContext;
  now(): number;
};

/** Hooks and approval before the caller gets the call; refused: an error result for the model. */
export async function admitDirectClientCall(
  d: DirectClientDeps,
  input: unknown,
): Promise<{ ok: true; input: unknown; admission: DirectClientAdmission } | { ok: false; message: string }> {
  const startedAt = d.now();
  d.recorder.start(input);
  // Counted as it is made, like a direct host tool (callDirectTool): refused calls too.
  d.counters.call++;
  recordCalled(d.counters, { tool: d.entry.toolName, id: toolSearchId(d.entry), source: "client" });
  d.saveCounters();
  const admitted = await admitClientCall(d.entry, input ?? {}, d.policy, d.context);
  if (!admitted.ok) {
    d.recorder.end({ ok: true, body: { status: "failed", error: admitted.message } }, input, d.now() - startedAt);
    return { ok: false, message: admitted.message };
  }
  d.recorder.handedOut(d.now() - startedAt);
  return { ok: true, input: admitted.input, admission: { decision: admitted.decision, startedAt } };
}

export type SettleDeps = {
  spec: TurnSpec;
  transcript: TranscriptPort;
  recordDelivered(callId: string): void;
  now(): number;
};

/**
 * The caller's result for a directly called client tool: the tool message the model reads next
 * (fit to its per-result limit like every other result), the call settled in the trajectory, and
 * its log record. Returns the settlement (what after-hooks see).
 */
export function settleDirectClientCall(d: SettleDeps, chat: ChatState, call: PendingClientCall, body: ClientResultBody): Settlement {
  const { turnId } = d.spec;
  const settlement = clientResultSettlement(d.spec, call.tool, body);
  const result = settlement.ok
    ? { status: "completed", value: settlement.text === undefined ? null : (JSON.parse(settlement.text) as unknown) }
    : { status: "failed", error: settlement.message };
  d.transcript.append(turnId, {
    role: "tool",
    toolCallId: call.providerCallId ?? call.callId,
    toolName: call.tool,
    content: modelFacingResult(result, modelResultLimits(chat.contextWindow ?? DEFAULT_CONTEXT_WINDOW)).text,
    ...(settlement.ok ? {} : { isError: true }),
  });
  chat.pending = chat.pending.filter((p) => p !== call);
  d.transcript.saveState(turnId, chat);
  d.recordDelivered(call.callId);
  recordClientResult(d, {
    callId: call.callId,
    parentCallId: call.callId,
    tool: call.tool,
    source: "direct",
    ok: settlement.ok,
    // Calls handed out by older builds kept no admission: they passed policy as `allowed` or better.
    decision: call.admission?.decision ?? "allowed",
    ...(call.admission ? { startedAt: call.admission.startedAt } : {}),
  });
  return settlement;
}
