import { Catalog } from "../catalog";
import { runAgentLoop, type LoopEnd, type OpenedTool, type ToolRun } from "./agent-loop";
import { encodeEvent, shownCall, type ChatAnswer, type ChatError, type ChatEvent, type PendingClientCall, type SubAgents } from "./chat-events";
import { chatMeta, countToolCall, newChatState, type ChatState } from "./chat-state";
import { modelFacingResult, modelResultLimits } from "./model-result";
import type { OuterReply } from "./agent-port";
import type { CodeModeResult } from "../code-mode";
import { MAX_TRANSCRIPT_BYTES, NESTED_PREVIEW_BYTES, PROVIDER_TIMEOUT_MS } from "../limits";
import { logRecord, redactedPreview } from "../observability";
import { costUsd, createModelClient, ProviderError, resolveModel, type ModelMessage, type ModelToolCall, type ResolvedModel } from "../providers";
import type { ModelTool, TurnCounters, TurnSpec } from "../turns";
import { storedInput, type RedactionOptions } from "../observability";
import type { ChatRequest } from "./chat-request";
import type { ChatCall, ChatPort } from "./agent-port";
import { GatewayError, isRetryable, type ChatErrorCode } from "../errors";
import { FREE_SPACE, QuotaExceeded, type Reservation } from "../quota";

type Emit = (event: ChatEvent) => void;

const refuse = (code: ChatErrorCode, message: string): never => {
  throw new GatewayError(code, message);
};

/**
 * One `/chat` call as a stream of NDJSON events: open (or continue) the turn, run the agent loop,
 * and end with exactly one `done` or `error` event. Nothing here throws past the stream: a
 * provider failure, a refused request or an unexpected fault is an `error` event, and the turn's
 * transcript and trajectory keep what happened before it.
 */
export function runChat(host: ChatPort, tenantId: string, sessionId: string, req: ChatRequest, requestId: string): ReadableStream<Uint8Array> {
  let cancel: (() => void) | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const emit: Emit = (event) => {
        if (cancelled) return;
        // A JSON caller reads only these: the events between are not encoded, sent and parsed for nothing.
        if (req.answerOnly && event.type !== "turn" && event.type !== "done" && event.type !== "error") return;
        try {
          controller.enqueue(encodeEvent(event));
        } catch {
          cancelled = true;
        }
      };
      void drive(host, tenantId, sessionId, req, requestId, emit, (fn) => {
        cancel = fn;
        if (cancelled) fn();
      }).finally(() => {
        if (!cancelled) controller.close();
      });
    },
    cancel() {
      // The HTTP client went away (or the Worker stopped reading): cancel the turn's active work.
      cancelled = true;
      cancel?.();
    },
  });
}

async function drive(
  host: ChatPort,
  tenantId: string,
  sessionId: string,
  req: ChatRequest,
  requestId: string,
  emit: Emit,
  onCancel: (fn: () => void) => void,
): Promise<void> {
  let turnId: string | undefined;
  let state: ChatState | undefined;
  let spec: TurnSpec | undefined;
  // The turn's counters as last seen: a turn deleted under this call still reports its meta.
  let counters: TurnCounters | undefined;
  let abort: ChatCall | undefined;
  let driving = false;
  // Set once the loop owns the turn: a continuation refused before that leaves the stored state as it was.
  let started = false;
  // Room held for the record of how this call ends (its state), so a full session still records it.
  let stopRoom: Reservation | undefined;
  // Client calls this /chat call admitted: open calls until its waiting answer hands them to the caller.
  const admitted: string[] = [];
  try {
    const config = host.env.config();
    if (!config.ok) return refuse("invalid_config", config.message);
    let messages: ModelMessage[];
    let continued = false;
    let deferred: PendingClientCall[] = [];
    if (req.turnId !== undefined) {
      const id = req.turnId;
      const turn = host.turns.get(tenantId, id) ?? refuse("not_found", "unknown turn");
      const stored = host.records.state(id);
      if (!stored) return refuse("conflict", "this turn was not opened by /chat; drive it through its tools route");
      if (host.calls.driving.has(id)) return refuse("conflict", "another /chat call is driving this turn");
      // `running` with nobody driving it: the object was reset under that call; it continues like a stopped turn.
      const continuable =
        stored.status === "waiting" ||
        stored.status === "running" ||
        (stored.status === "stopped" && isRetryable(stored.lastError ?? "internal_error"));
      if (!continuable)
        return refuse(
          "conflict",
          `this turn is ${stored.status}${stored.lastError ? ` (${stored.lastError})` : ""}; only a turn waiting for client results, or stopped by a retryable failure, continues`,
        );
      if (req.model !== undefined && req.model !== stored.model)
        return refuse("invalid_request", `this turn talks to ${stored.model}; a continuation cannot change the model`);
      if (host.records.transcriptBytes(id) > MAX_TRANSCRIPT_BYTES)
        return refuse("conflict", `this turn's transcript is over ${MAX_TRANSCRIPT_BYTES} bytes; start a new turn`);
      const missing = stored.pending.filter((p) =>
        p.runId !== undefined ? !host.turns.wasDelivered(id, p.callId) && host.turns.runParked(p.runId) : true,
      );
      if (missing.length > 0)
        return refuse(
          "conflict",
          `client results are still pending for ${missing.map((p) => p.callId).join(", ")}; post each to /v1/sessions/${sessionId}/turns/${id}/client-results first`,
        );
      stopRoom = host.records.reserve(STOP_RECORD_BYTES) ?? refuseFull();
      turnId = id;
      spec = turn.spec;
      counters = turn.counters;
      state = stored;
      host.calls.driving.add(id);
      driving = true;
      // Tool Search cells parked on client calls are resumed first (their answers are the model's tool messages).
      deferred = stored.pending.filter((p) => p.runId !== undefined && p.providerCallId !== undefined);
      messages = deferred.length > 0 ? [] : repairReplay(host, tenantId, id, requestId, state, host.records.messages(id));
      continued = true;
    } else {
      const model = resolveModel(config.config, req.model!, host.env.vars);
      if (!model.ok) return refuse("invalid_request", model.message);
      // The Messages API takes a temperature of at most 1 (Chat Completions: 2).
      if (model.model.api === "anthropic-messages" && (req.sampling?.temperature ?? 0) > 1)
        return refuse("invalid_request", `temperature must be from 0 to 1 for ${req.model} (Anthropic Messages)`);
      const { messages: given, turnId: _t, maxAssistantTurns: _m, sampling, historyKey, ...turnReq } = req;
      messages = given.map((m) => ({ role: m.role, content: m.content }));
      // The turn, its first messages and the room for its stop record are admitted together.
      const opened = await host.turns.open(tenantId, sessionId, turnReq, messagesBytes(messages) + STOP_RECORD_BYTES);
      if (!opened.ok) return refuse(opened.reason, opened.message);
      turnId = opened.body.turnId;
      host.calls.driving.add(turnId);
      driving = true;
      ({ spec, counters } = host.turns.get(tenantId, turnId)!);
      state = newChatState(req.model!, model.model.contextWindow, sampling);
      if (historyKey !== undefined) state.historyKey = historyKey;
      stopRoom = host.records.reserve(STOP_RECORD_BYTES);
      host.records.appendAll(turnId, messages);
    }
    const resolved = resolveModel(config.config, state.model, host.env.vars);
    if (!resolved.ok) return refuse("invalid_request", resolved.message);
    const surface = host.turns.surface(spec);
    if (!surface.ok) return refuse("surface_rejected", surface.message);

    abort = host.calls.track(turnId, requestId);
    onCancel(() => abort!.abort());
    state.status = "running";
    state.pending = [];
    delete state.lastError;
    host.records.saveState(turnId, state);
    started = true;
    emit({ type: "turn", turnId, codeModeEngaged: spec.codeModeEngaged, continued });

    const ctx: LoopCtx = {
      tenantId,
      sessionId,
      turnId,
      requestId,
      spec,
      state,
      model: resolved.model,
      tools: surface.tools,
      signal: abort.signal,
      maxAssistantTurns: req.maxAssistantTurns,
      emit,
      answerOnly: req.answerOnly === true,
      admitted,
    };
    let end: LoopEnd | undefined;
    if (deferred.length > 0) {
      const parked = await resumeDeferredCells(host, ctx, deferred);
      host.records.saveState(turnId, state);
      if (parked.length > 0) {
        state.stopReason = "client_tools";
        end = { status: "waiting", pending: parked };
      } else messages = repairReplay(host, tenantId, turnId, requestId, state, host.records.messages(turnId));
    }
    end ??= await loop(host, ctx, messages);
    state.status = end.status === "waiting" ? "waiting" : "completed";
    state.pending = end.status === "waiting" ? end.pending : [];
    host.records.saveState(turnId, state);
    // Client tools the model called directly are the caller's now (a reset no longer loses them).
    for (const p of state.pending) if (p.admission) host.records.callEnded(turnId, p.callId);
    const subAgents = await host.turns.subAgents?.(sessionId, turnId).catch(() => undefined);
    emit({ type: "done", answer: answer(host, tenantId, turnId, state, resolved.model, end, subAgents) });
  } catch (error) {
    const turn = turnId !== undefined ? host.turns.get(tenantId, turnId) : undefined;
    // Deleted under this call (the turn or its session): that ended it, whatever failed after.
    const deleted = turnId !== undefined && !turn;
    const failure: ChatError = deleted
      ? { code: "aborted", message: "the turn (or its session) was deleted while /chat ran" }
      : toChatError(error, abort?.signal);
    // Only while the turn still exists (deleting it, or the session, cancels the loop): the
    // transcript keeps everything before the failure, and a retryable failure may be continued.
    if (state && turnId && turn && (started || !continuedTurn(req))) {
      try {
        state.status = "stopped";
        state.lastError = failure.code;
        saveStop(host, turnId, state, stopRoom);
        host.records.event(turnId, host.env.now(), "limit", { limit: failure.code, detail: failure.message.slice(0, 240) });
      } catch (writeError) {
        logRecord("host_error", { where: "chat.stop", error: writeError, requestId, tenant: tenantId, sessionId, turnId });
      }
      // Client calls admitted and never handed to the caller are not open any more (a reset would
      // report them lost; a continuation answers them as not run).
      try {
        for (const callId of admitted) host.records.callEnded(turnId, callId);
      } catch (writeError) {
        logRecord("host_error", { where: "chat.stop", error: writeError, requestId, tenant: tenantId, sessionId, turnId });
      }
    }
    if (failure.code === "internal_error")
      logRecord("host_error", { where: "chat.unexpected", error, requestId, tenant: tenantId, sessionId, turnId });
    const shown = turn ?? (deleted && spec && counters ? { spec, counters } : undefined);
    const ended: ChatState | undefined = state && deleted ? { ...state, status: "stopped", lastError: "aborted" } : state;
    emit({
      type: "error",
      error: failure,
      ...(turnId !== undefined ? { turnId } : {}),
      ...(ended && shown ? { meta: chatMeta(ended, { codeModeEngaged: shown.spec.codeModeEngaged, counters: shown.counters }, undefined) } : {}),
    });
  } finally {
    stopRoom?.release();
    abort?.untrack();
    if (driving && turnId) host.calls.driving.delete(turnId);
  }
}

const continuedTurn = (req: ChatRequest): boolean => req.turnId !== undefined;

/**
 * Room a /chat call holds for its stop record: the state's `lastError` and the counts the loop
 * moved since its last save. Past it, the stored state is stopped as it was last saved.
 */
const STOP_RECORD_BYTES = 1024;

const refuseFull = (): never =>
  refuse("quota_exceeded", "session storage is full: this turn cannot record another /chat call (gateway.sessions.maxStoredBytes); " + FREE_SPACE);

const utf8 = new TextEncoder();
const messagesBytes = (messages: readonly ModelMessage[]): number => messages.reduce((n, m) => n + utf8.encode(JSON.stringify(m)).length, 0);

/**
 * Record how the call ended. The state as it is now fits the room held for it unless the loop
 * moved much since its last save; then the stored state is stopped as it was (its `lastError`
 * fits the room): the turn is never left `running`.
 */
function saveStop(host: ChatPort, turnId: string, state: ChatState, room: Reservation | undefined): void {
  const promised = room ? { reservation: room, take: room.remaining } : undefined;
  try {
    host.records.saveState(turnId, state, promised);
  } catch (error) {
    if (!(error instanceof QuotaExceeded)) throw error;
    const stored = host.records.state(turnId);
    if (!stored) throw error;
    host.records.saveState(turnId, { ...stored, status: "stopped", lastError: state.lastError }, promised);
  }
}

/**
 * A turn stopped mid-round (a provider failure after tools ran, a reset, a cancel) may have tool
 * calls of its last assistant message without results; providers refuse such a replay. Each gets a
 * stored error result saying its outcome is unknown (the model inspects state before repeating it),
 * and counts as a failed outer call (a reset lost the loop's count of its round). One that never
 * started is put on record as not run (one that started is already there, `lost` after a reset).
 */
function repairReplay(
  host: ChatPort,
  tenantId: string,
  turnId: string,
  requestId: string,
  state: ChatState,
  messages: ModelMessage[],
): ModelMessage[] {
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "assistant") {
      last = i;
      break;
    }
  }
  const assistant = last >= 0 ? messages[last] : undefined;
  if (!assistant || assistant.role !== "assistant" || !assistant.toolCalls?.length) return messages;
  const answered = new Set(messages.slice(last + 1).flatMap((m) => (m.role === "tool" ? [m.toolCallId] : [])));
  const unanswered = assistant.toolCalls.filter((call) => !answered.has(call.id));
  const started = unanswered.length > 0 ? startedThisRound(host, turnId) : new Set<string>();
  const repairs: ModelMessage[] = unanswered.map((call) => ({
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: "error: the turn stopped before this call answered; its outcome is unknown. Inspect state before repeating it.",
    isError: true,
  }));
  if (repairs.length === 0) return messages;
  // All or none (one guarded write): a session too full for them refuses the continuation, storing nothing.
  host.records.appendAll(turnId, repairs);
  for (const call of unanswered)
    if (!started.has(call.id))
      host.tools.notRun(tenantId, turnId, { callId: call.id, tool: call.name, input: call.input, requestId }, "turn_stopped");
  for (const r of repairs) if (r.role === "tool") countToolCall(state, r.toolName, true);
  return [...messages, ...repairs];
}

/** Outer calls on record since the turn's last model call (the round a stopped turn was in). */
function startedThisRound(host: ChatPort, turnId: string): Set<string> {
  const rows = host.records.events(turnId);
  let i = rows.length - 1;
  while (i >= 0 && rows[i]!.kind !== "model_call") i--;
  return new Set(rows.slice(i + 1).flatMap((r) => (r.kind === "outer_start" && typeof r.body.callId === "string" ? [r.body.callId] : [])));
}

type LoopCtx = {
  tenantId: string;
  sessionId: string;
  turnId: string;
  requestId: string;
  spec: TurnSpec;
  state: ChatState;
  model: ResolvedModel;
  tools: ModelTool[];
  signal: AbortSignal;
  maxAssistantTurns: number;
  emit: Emit;
  /** The caller asked for the JSON answer only: no event but the turn and the answer leaves. */
  answerOnly: boolean;
  /** Gateway ids of the client calls admitted so far (see `runChat`'s `admitted`). */
  admitted: string[];
};

function loop(host: ChatPort, c: LoopCtx, messages: ModelMessage[]): Promise<LoopEnd> {
  const redaction = host.env.redaction(c.spec);
  const limits = modelResultLimits(c.model.contextWindow);
  const visible = new Set(c.tools.map((t) => t.name));
  const clientTools = new Set([...new Catalog(c.spec.catalog).clientToolNames()].filter((name) => visible.has(name)));
  const client = createModelClient(c.model, {
    timeoutMs: PROVIDER_TIMEOUT_MS,
    observer: host.env.observer({ tenant: c.tenantId, sessionId: c.sessionId, turnId: c.turnId, requestId: c.requestId }),
    redaction,
    ...(host.env.fetch ? { fetch: host.env.fetch } : {}),
  });
  let modelCallStarted = host.env.now();
  // Room held for the placeholder results of the round in progress.
  let round: Reservation | undefined;
  // A model call's trajectory event, written with the state and message its reply leads to (one
  // step), or on its own if the loop ends first.
  let modelCall: { at: number; body: Record<string, unknown> } | undefined;
  const recordModelCall = () => {
    if (!modelCall) return;
    const { at, body } = modelCall;
    modelCall = undefined;
    host.records.event(c.turnId, at, "model_call", body);
  };
  return runAgentLoop(
    {
      client,
      wholeAnswers: c.answerOnly,
      tools: c.tools,
      signal: c.signal,
      maxAssistantTurns: c.maxAssistantTurns,
      state: c.state,
      isClientTool: (name) => clientTools.has(name),
      admitClient: async (call, callId) => {
        const admission = await host.tools.admitClient(c.tenantId, c.turnId, call, { callId, requestId: c.requestId, signal: c.signal });
        if (admission.ok) c.admitted.push(callId);
        return admission;
      },
      displayInput: (call) => storedInput(call.name, call.input, redaction),
      notRun: (call, reason) =>
        host.tools.notRun(c.tenantId, c.turnId, { callId: call.id, tool: call.name, input: call.input, requestId: c.requestId }, reason),
      append: (message, r) => {
        const stored = storedMessage(message, redaction);
        if (r && "reserve" in r) {
          // The message and room for its calls' placeholder results, or neither.
          const need = messagesBytes(r.reserve);
          round = host.records.reserve(need) ?? undefined;
          if (!round)
            throw new QuotaExceeded(
              `session storage is full: the model's next message and its ${r.reserve.length} results cannot be stored (gateway.sessions.maxStoredBytes); ${FREE_SPACE}`,
            );
          try {
            return { message: stored, full: !host.records.append(c.turnId, stored) };
          } catch (error) {
            round.release();
            round = undefined;
            throw error;
          }
        }
        if (r && "instead" in r && round) {
          const promised = { reservation: round, take: messagesBytes([r.instead]) };
          try {
            return { message: stored, full: !host.records.append(c.turnId, stored, promised) };
          } catch (error) {
            if (!(error instanceof QuotaExceeded)) throw error;
            return { message: r.instead, full: !host.records.append(c.turnId, r.instead, promised), refused: error.message };
          }
        }
        return { message: stored, full: !host.records.append(c.turnId, stored) };
      },
      endRound: () => {
        round?.release();
        round = undefined;
      },
      saveState: () => {
        recordModelCall();
        host.records.saveState(c.turnId, c.state);
      },
      ...(host.records.step ? { step: <T>(fn: () => T): T => host.records.step!(fn) } : {}),
      emit: (event) => {
        if (event.type === "assistant_turn") {
          recordModelCall();
          const now = host.env.now();
          modelCall = { at: now, body: { n: event.n, finishReason: event.finishReason, usage: event.usage, durationMs: now - modelCallStarted } };
        }
        if (event.type === "tool_call_end") modelCallStarted = host.env.now();
        c.emit(event);
      },
      openTool: (call: ModelToolCall): OpenedTool => {
        const opened = host.tools.open(c.tenantId, c.turnId, call.name, call.input, {
          callId: call.id,
          via: "chat",
          parent: c.signal,
          onUpdate: (invocationId, tool, partial) =>
            c.emit({
              type: "tool_update",
              parentCallId: call.id,
              ...(invocationId !== undefined && invocationId !== call.id ? { invocationId } : {}),
              tool,
              partial: redactedPreview(partial, NESTED_PREVIEW_BYTES, redaction),
            }),
          onNested: (n) =>
            c.emit({
              type: "nested_call",
              parentCallId: call.id,
              invocationId: n.invocationId,
              tool: n.tool,
              source: n.source,
              ok: n.ok,
              durationMs: n.durationMs,
            }),
        });
        return {
          run: async () => {
            const outer = await opened.run();
            modelCallStarted = host.env.now();
            try {
              return toolRun(host, c, call, outer, limits);
            } catch (error) {
              // Its end is on record all the same (a call left open reads as lost after a reset).
              outer.record();
              throw error;
            }
          },
        };
      },
    },
    messages,
  ).finally(() => {
    round?.release();
    try {
      recordModelCall();
    } catch (error) {
      logRecord("host_error", {
        where: "chat.model_call_record",
        error,
        requestId: c.requestId,
        tenant: c.tenantId,
        sessionId: c.sessionId,
        turnId: c.turnId,
      });
    }
  });
}

/**
 * The model-facing run of an outer call's reply. Its `record` puts the call's end on record (when
 * `outer` has one still to write), then the projection of a result too large for the model's context.
 */
function toolRun(
  host: ChatPort,
  c: LoopCtx,
  call: ModelToolCall,
  outer: OuterReply & { record?(): void },
  limits: ReturnType<typeof modelResultLimits>,
): ToolRun {
  if (!outer.reply.ok) {
    const text = outer.reply.reason === "not_found" ? `error: ${call.name} is not one of this turn's tools` : `error: ${outer.reply.message}`;
    return { content: text, isError: true, status: "failed", untrusted: false, ...(outer.record ? { record: outer.record } : {}) };
  }
  const body = outer.reply.body as Partial<CodeModeResult> & { status?: string };
  const facing = modelFacingResult(body, limits, outer.untrusted ? { source: "mcp" } : undefined);
  const record = () => {
    outer.record?.();
    if (facing.reprojected)
      host.records.event(c.turnId, host.env.now(), "limit", {
        limit: "model_context",
        callId: call.id,
        detail: `result projected to ${facing.limit} bytes for ${c.model.ref}`,
      });
  };
  // Only client calls go to the caller; a cell parked on slow host tools goes back to the model (it calls wait).
  const clientNames = new Catalog(c.spec.catalog).clientToolNames();
  const calls = body.status === "waiting" ? (body.pendingToolCalls ?? []).filter((p) => clientNames.has(p.tool)) : [];
  const runId = body.status === "waiting" ? (body as { runId?: string }).runId : undefined;
  // Tool Search has no `wait` for the model: its call is answered later, by the client's result
  // (`tool_call`) or by the cell the gateway resumes once the results are in (`tool_search_code`).
  const deferred = c.spec.toolSearch !== undefined && calls.length > 0;
  const pending: PendingClientCall[] | undefined = calls.length
    ? calls.map((p) => ({
        ...p,
        ...(runId ? { runId } : {}),
        ...(deferred ? { providerCallId: call.id, ...(runId ? {} : { via: "tool_call" as const }) } : {}),
      }))
    : undefined;
  return {
    content: facing.text,
    isError: body.status === "failed",
    status: typeof body.status === "string" ? body.status : "completed",
    untrusted: facing.untrusted,
    ...(pending ? { pending } : {}),
    ...(deferred ? { deferred } : {}),
    record,
  };
}

/**
 * A continued Tool Search turn first finishes what it deferred: each `tool_search_code` cell
 * parked on client calls (their results are all in) is resumed as `tool_search_code { runId }`
 * under the model's own call id, and its end becomes that call's tool message. A cell that parks
 * again hands its new client calls to the caller: returned, and the turn waits again.
 */
async function resumeDeferredCells(host: ChatPort, c: LoopCtx, deferred: PendingClientCall[]): Promise<PendingClientCall[]> {
  const limits = modelResultLimits(c.model.contextWindow);
  const parked: PendingClientCall[] = [];
  const runs = new Map<string, string>();
  for (const p of deferred) if (p.runId !== undefined && p.providerCallId !== undefined) runs.set(p.runId, p.providerCallId);
  for (const [runId, providerCallId] of runs) {
    const call: ModelToolCall = { id: providerCallId, name: "tool_search_code", input: { runId } };
    c.emit({ type: "tool_call_start", callId: call.id, name: call.name, input: call.input });
    const outer = await host.tools.run(c.tenantId, c.turnId, call.name, call.input, { callId: call.id, via: "chat", parent: c.signal });
    const run = toolRun(host, c, call, outer, limits);
    run.record?.();
    c.emit({ type: "tool_call_end", callId: call.id, name: call.name, status: run.status, untrusted: run.untrusted, result: run.content });
    if (run.deferred && run.pending) {
      parked.push(...run.pending);
      continue;
    }
    // Counted as a call when it was first handed out; a failed end counts as its failure now.
    if (run.isError) c.state.failures++;
    host.records.append(c.turnId, {
      role: "tool",
      toolCallId: call.id,
      toolName: call.name,
      content: run.content,
      ...(run.isError ? { isError: true } : {}),
    });
  }
  return parked;
}

/** The transcript stores `exec` source redacted; everything else as the model sent or read it. */
function storedMessage(message: ModelMessage, redaction: RedactionOptions): ModelMessage {
  if (message.role !== "assistant" || !message.toolCalls) return message;
  return { ...message, toolCalls: message.toolCalls.map((t) => ({ ...t, input: storedInput(t.name, t.input, redaction) })) };
}

function answer(
  host: ChatPort,
  tenantId: string,
  turnId: string,
  state: ChatState,
  model: ResolvedModel,
  end: LoopEnd,
  subAgents: SubAgents | undefined,
): ChatAnswer {
  // Counters move during the loop (bridge calls): read them after it.
  const turn = host.turns.get(tenantId, turnId);
  const meta = {
    ...chatMeta(
      state,
      { codeModeEngaged: turn?.spec.codeModeEngaged ?? false, counters: turn?.counters ?? { search: 0, describe: 0, call: 0 } },
      costUsd(state.usage, model.cost),
    ),
    ...(subAgents ? { subAgents } : {}),
  };
  return end.status === "waiting"
    ? { turnId, status: "waiting", pendingToolCalls: end.pending.map(shownCall), meta }
    : { turnId, status: "completed", message: { role: "assistant", content: end.text }, meta };
}

function toChatError(error: unknown, signal: AbortSignal | undefined): ChatError {
  // The loop's own refusals and the session's storage quota (a message, state or result it cannot
  // hold: the turn stops, its transcript in whole rounds) — always a chat code.
  if (error instanceof GatewayError) return { code: error.code as ChatErrorCode, message: error.message };
  if (error instanceof ProviderError) {
    return {
      code: error.code,
      message: error.message,
      ...(error.status > 0 ? { providerStatus: error.status } : {}),
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
    };
  }
  if (signal?.aborted) return { code: "aborted", message: "the /chat call was cancelled" };
  return { code: "internal_error", message: "internal error in the agent loop" };
}
