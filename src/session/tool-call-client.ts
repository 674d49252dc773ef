import { recordClientResult } from "./client-result-record";
import { QuotaExceeded } from "../quota";
import { modelFacingResult, modelResultLimits, type ChatState } from "../agent";
import type { Settlement } from "../bridge";
import type { CatalogEntry } from "../catalog";
import { failed } from "../cell";
import { utf8ByteLength, type CodeModeResult, type CodeModeTelemetry } from "../code-mode";
import { DEFAULT_CONTEXT_WINDOW } from "../providers";
import { checkValue, type CallPolicy, type ToolContext } from "../tools";
import { admitClientCall, clientResultSettlement, type ClientCallWaiting, type TurnSpec } from "../turns";
import type { ClientResultBody } from "./session-rpc";
import type { ToolCallClient, ToolCallClientsPort } from "./ports";
import type { TranscriptPort } from "./ports";

/*
 * Tool Search's `tool_call` (mode "tools") of a client tool: the gateway never runs it, so the
 * call becomes the caller's, one pending client call with a gateway id (`ccall_…`), as a client
 * tool the model calls directly in /chat does. Its result, posted to client-results, is the
 * `tool_call`'s result: over /v1 the 202 answer carries it, in /chat it becomes the tool message
 * the model reads next.
 */

export type HandOutDeps = {
  spec: TurnSpec;
  store: ToolCallClientsPort;
  /** The outer `tool_call`'s id. */
  parentCallId: string;
  /** The turn's policy for calls made through Tool Search (nested). */
  policy?: CallPolicy;
  context: Omit<ToolContext, "signal" | "callId">;
  signal: AbortSignal;
  now(): number;
};

/**
 * The same limits as a cell's client call: the pending-call cap (per turn: nothing else bounds
 * calls nobody answers), the input bound and schema, then hooks and approvals. Refused: a failed
 * `tool_call`, nothing handed out.
 */
export async function handOutToolCallClient(
  d: HandOutDeps,
  entry: CatalogEntry,
  args: Record<string, unknown>,
  telemetry: () => CodeModeTelemetry,
): Promise<CodeModeResult | ClientCallWaiting> {
  const { options } = d.spec;
  const startedAt = d.now();
  if (d.store.count(d.spec.turnId) >= options.maxPendingToolCalls)
    return failed(
      `too many pending tool calls: this turn already waits for ${options.maxPendingToolCalls} client results (maxPendingToolCalls); post their results first`,
      undefined,
      telemetry(),
    );
  if (utf8ByteLength(JSON.stringify(args)) > options.maxOutputBytes)
    return failed(
      `input for client tool ${entry.toolName} is larger than maxOutputBytes (${options.maxOutputBytes}); send less`,
      "invalid_input",
      telemetry(),
    );
  const check = checkValue(entry.parameters, args, true);
  if (!check.ok) return failed(`invalid input for ${entry.toolName}: ${check.message}`, "invalid_input", telemetry());
  const callId = `ccall_${crypto.randomUUID()}`;
  const admitted = d.policy
    ? await admitClientCall(entry, args, d.policy, { ...d.context, signal: d.signal, callId })
    : { ok: true as const, input: args as unknown, decision: "allowed" as const };
  if (!admitted.ok) return failed(admitted.message, undefined, telemetry());
  const call: ToolCallClient = {
    turnId: d.spec.turnId,
    callId,
    parentCallId: d.parentCallId,
    tool: entry.toolName,
    input: admitted.input ?? {},
    decision: admitted.decision,
    startedAt,
  };
  // The turn went away while policy decided, or the session cannot store the call: nothing is handed out.
  try {
    if (!d.store.add(call)) return failed("the turn was deleted before the call was handed out", "aborted", telemetry());
  } catch (error) {
    if (error instanceof QuotaExceeded) return failed(error.message, "invalid_input", telemetry());
    throw error;
  }
  return { status: "waiting", reason: "pending_tools", pendingToolCalls: [{ callId, tool: call.tool, input: call.input }], telemetry: telemetry() };
}

export type SettleDeps = {
  spec: TurnSpec;
  store: ToolCallClientsPort;
  transcript: TranscriptPort;
  recordDelivered(callId: string): void;
  now(): number;
};

/** What the `tool_call` answers once its client result arrived (the model reads the same). */
export type ToolCallOutcome = { status: "completed"; value: unknown } | { status: "failed"; error: string };

/**
 * The caller's result for a pending `tool_call` client call: checked like any client result
 * (declared outputSchema, maxOutputBytes), the call settled in the trajectory and the log, and
 * in a /chat turn waiting for it, the tool message of the model's `tool_call`.
 */
export function settleToolCallClient(
  d: SettleDeps,
  call: ToolCallClient,
  body: ClientResultBody,
): { settlement: Settlement; outcome: ToolCallOutcome } {
  const { turnId } = d.spec;
  const settlement = clientResultSettlement(d.spec, call.tool, body);
  const outcome: ToolCallOutcome = settlement.ok
    ? { status: "completed", value: settlement.text === undefined ? null : (JSON.parse(settlement.text) as unknown) }
    : { status: "failed", error: settlement.message };
  d.store.settle(turnId, call.callId);
  d.recordDelivered(call.callId);
  const chat = d.transcript.state(turnId);
  const waiting = chat?.status === "waiting" ? chat.pending.find((p) => p.via === "tool_call" && p.callId === call.callId) : undefined;
  if (chat && waiting) answerModel(d, chat, waiting.providerCallId ?? call.parentCallId, outcome, waiting);
  recordClientResult(d, {
    callId: call.callId,
    parentCallId: call.parentCallId,
    tool: call.tool,
    source: "client",
    ok: settlement.ok,
    decision: call.decision,
    startedAt: call.startedAt,
  });
  return { settlement, outcome };
}

function answerModel(d: SettleDeps, chat: ChatState, toolCallId: string, outcome: ToolCallOutcome, pending: ChatState["pending"][number]): void {
  d.transcript.append(d.spec.turnId, {
    role: "tool",
    toolCallId,
    toolName: "tool_call",
    content: modelFacingResult(outcome, modelResultLimits(chat.contextWindow ?? DEFAULT_CONTEXT_WINDOW)).text,
    ...(outcome.status === "failed" ? { isError: true } : {}),
  });
  chat.pending = chat.pending.filter((p) => p !== pending);
  d.transcript.saveState(d.spec.turnId, chat);
}
