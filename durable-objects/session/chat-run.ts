import {
  chatMeta,
  encodeEvent,
  modelFacingResult,
  modelResultLimits,
  newChatState,
  runAgentLoop,
  type ChatAnswer,
  type ChatError,
  type ChatEvent,
  type ChatState,
  type LoopEnd,
  type PendingClientCall,
  type ToolRun,
} from "../../src/agent";
import type { GatewayConfig } from "../../src/config";
import type { CodeModeResult } from "../../src/code-mode";
import { NESTED_PREVIEW_BYTES, PROVIDER_TIMEOUT_MS } from "../../src/limits";
import { logRecord, redactedPreview } from "../../src/observability";
import {
  costUsd,
  createModelClient,
  ProviderError,
  resolveModel,
  type ModelMessage,
  type ModelToolCall,
  type ResolvedModel,
  type TransportObserver,
} from "../../src/providers";
import type { ModelTool, TurnCounters, TurnSpec } from "../../src/turns";
import { storedInput, type OuterCall, type OuterReply, type RedactionOptions } from "./outer-call-recorder";
import type { ChatRequest, OpenTurnAnswer, SessionFailure, SessionReply } from "./session-rpc";
import type { TranscriptStore } from "./transcript-store";
import type { OpenTurnRequest } from "./turn-opening";

/** What a /chat call needs from its session object (a narrow seam: the object stays a thin shell). */
export type ChatHost = {
  config(): { ok: true; config: GatewayConfig } | { ok: false; message: string };
  env: Record<string, unknown>;
  now(): number;
  openTurn(tenantId: string, sessionId: string, req: OpenTurnRequest): Promise<SessionReply<OpenTurnAnswer>>;
  turn(tenantId: string, turnId: string): { spec: TurnSpec; counters: TurnCounters } | undefined;
  surface(spec: TurnSpec): { ok: true; tools: ModelTool[] } | { ok: false; message: string };
  runOuter(tenantId: string, turnId: string, toolName: string, input: unknown, call: OuterCall): Promise<OuterReply>;
  transcript: TranscriptStore;
  wasDelivered(turnId: string, callId: string): boolean;
  track(turnId: string, requestId: string): AbortController;
  untrack(turnId: string, c: AbortController, requestId: string): void;
  redaction(spec: TurnSpec): RedactionOptions;
  observer(ids: { tenant: string; sessionId: string; turnId: string; requestId: string }): TransportObserver | undefined;
  /** Tests swap the provider transport; production uses the platform's fetch. */
  fetch?: typeof fetch;
};

type Emit = (event: ChatEvent) => void;

const FAILURE_CODES: Record<SessionFailure, ChatError["code"]> = {
  invalid_request: "invalid_request",
  not_found: "not_found",
  conflict: "conflict",
  quota_exceeded: "quota_exceeded",
  invalid_config: "invalid_config",
  session_reset: "internal_error",
  surface_rejected: "surface_rejected",
};

class ChatRefused extends Error {
  constructor(readonly error: ChatError) {
    super(error.message);
  }
}

const refuse = (code: ChatError["code"], message: string): never => {
  throw new ChatRefused({ code, message });
};

/**
 * One `/chat` call as a stream of NDJSON events: open (or continue) the turn, run the agent loop,
 * and end with exactly one `done` or `error` event. Nothing here throws past the stream: a
 * provider failure, a refused request or an unexpected fault is an `error` event, and the turn's
 * transcript and trajectory keep what happened before it.
 */
export function runChat(host: ChatHost, tenantId: string, sessionId: string, req: ChatRequest, requestId: string): ReadableStream<Uint8Array> {
  let cancel: (() => void) | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const emit: Emit = (event) => {
        if (cancelled) return;
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
  host: ChatHost,
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
  let abort: AbortController | undefined;
  try {
    const config = host.config();
    if (!config.ok) return refuse("invalid_config", config.message);
    let messages: ModelMessage[];
    let continued = false;
    if (req.turnId !== undefined) {
      const turn = host.turn(tenantId, req.turnId) ?? refuse("not_found", "unknown turn");
      const stored = host.transcript.state(req.turnId);
      if (!stored) return refuse("conflict", "this turn was not opened by /chat; drive it through its tools route");
      if (stored.status === "running") return refuse("conflict", "another /chat call is driving this turn");
      if (stored.status !== "waiting") return refuse("conflict", `this turn is ${stored.status}; only a turn waiting for client results continues`);
      if (req.model !== undefined && req.model !== stored.model)
        return refuse("invalid_request", `this turn talks to ${stored.model}; a continuation cannot change the model`);
      const missing = stored.pending.filter((p) => (p.runId !== undefined ? !host.wasDelivered(req.turnId!, p.callId) : true));
      if (missing.length > 0)
        return refuse(
          "conflict",
          `client results are still pending for ${missing.map((p) => p.callId).join(", ")}; post each to /v1/sessions/${sessionId}/turns/${req.turnId}/client-results first`,
        );
      turnId = req.turnId;
      spec = turn.spec;
      state = stored;
      messages = host.transcript.messages(turnId);
      continued = true;
    } else {
      const model = resolveModel(config.config, req.model!, host.env);
      if (!model.ok) return refuse("invalid_request", model.message);
      const { messages: given, turnId: _t, maxAssistantTurns: _m, ...turnReq } = req;
      const opened = await host.openTurn(tenantId, sessionId, turnReq);
      if (!opened.ok) return refuse(FAILURE_CODES[opened.reason], opened.message);
      turnId = opened.body.turnId;
      spec = host.turn(tenantId, turnId)!.spec;
      state = newChatState(req.model!);
      messages = given.map((m) => ({ role: m.role, content: m.content }));
      for (const m of messages) host.transcript.append(turnId, m);
    }
    const resolved = resolveModel(config.config, state.model, host.env);
    if (!resolved.ok) return refuse("invalid_request", resolved.message);
    const surface = host.surface(spec);
    if (!surface.ok) return refuse("surface_rejected", surface.message);

    abort = host.track(turnId, requestId);
    onCancel(() => abort!.abort());
    state.status = "running";
    state.pending = [];
    host.transcript.saveState(turnId, state);
    emit({ type: "turn", turnId, codeModeEngaged: spec.codeModeEngaged, continued });

    const end = await loop(
      host,
      {
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
      },
      messages,
    );
    state.status = end.status === "waiting" ? "waiting" : "completed";
    state.pending = end.status === "waiting" ? end.pending : [];
    host.transcript.saveState(turnId, state);
    emit({ type: "done", answer: answer(host, tenantId, turnId, state, resolved.model, end) });
  } catch (error) {
    const failure = toChatError(error, abort?.signal);
    if (state && turnId) {
      // The transcript keeps everything before the failure; the turn cannot be continued.
      state.status = "stopped";
      host.transcript.saveState(turnId, state);
      host.transcript.event(turnId, host.now(), "limit", { limit: failure.code, detail: failure.message.slice(0, 240) });
    }
    if (failure.code === "internal_error")
      logRecord("host_error", { where: "chat.unexpected", error, requestId, tenant: tenantId, sessionId, turnId });
    const turn = turnId !== undefined && spec !== undefined ? host.turn(tenantId, turnId) : undefined;
    emit({
      type: "error",
      error: failure,
      ...(turnId !== undefined ? { turnId } : {}),
      ...(state && turn ? { meta: chatMeta(state, { codeModeEngaged: turn.spec.codeModeEngaged, counters: turn.counters }, undefined) } : {}),
    });
  } finally {
    if (abort && turnId) host.untrack(turnId, abort, requestId);
  }
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
};

function loop(host: ChatHost, c: LoopCtx, messages: ModelMessage[]): Promise<LoopEnd> {
  const redaction = host.redaction(c.spec);
  const limits = modelResultLimits(c.model.contextWindow);
  const visible = new Set(c.tools.map((t) => t.name));
  const clientTools = new Set(c.spec.catalog.entries.filter((e) => e.source === "client" && visible.has(e.toolName)).map((e) => e.toolName));
  const client = createModelClient(c.model, {
    timeoutMs: PROVIDER_TIMEOUT_MS,
    observer: host.observer({ tenant: c.tenantId, sessionId: c.sessionId, turnId: c.turnId, requestId: c.requestId }),
    ...(host.fetch ? { fetch: host.fetch } : {}),
  });
  let modelCallStarted = host.now();
  return runAgentLoop(
    {
      client,
      tools: c.tools,
      signal: c.signal,
      maxAssistantTurns: c.maxAssistantTurns,
      state: c.state,
      isClientTool: (name) => clientTools.has(name),
      displayInput: (call) => storedInput(call.name, call.input, redaction),
      append: (message) => host.transcript.append(c.turnId, storedMessage(message, redaction)),
      saveState: () => host.transcript.saveState(c.turnId, c.state),
      emit: (event) => {
        if (event.type === "assistant_turn") {
          const now = host.now();
          host.transcript.event(c.turnId, now, "model_call", {
            n: event.n,
            finishReason: event.finishReason,
            usage: event.usage,
            durationMs: now - modelCallStarted,
          });
        }
        if (event.type === "tool_call_end") modelCallStarted = host.now();
        c.emit(event);
      },
      runTool: async (call: ModelToolCall): Promise<ToolRun> => {
        const outer = await host.runOuter(c.tenantId, c.turnId, call.name, call.input, {
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
        modelCallStarted = host.now();
        return toolRun(host, c, call, outer, limits);
      },
    },
    messages,
  );
}

function toolRun(host: ChatHost, c: LoopCtx, call: ModelToolCall, outer: OuterReply, limits: ReturnType<typeof modelResultLimits>): ToolRun {
  if (!outer.reply.ok) {
    const text = outer.reply.reason === "not_found" ? `error: ${call.name} is not one of this turn's tools` : `error: ${outer.reply.message}`;
    return { content: text, isError: true, status: "failed", untrusted: false };
  }
  const body = outer.reply.body as Partial<CodeModeResult> & { status?: string };
  const facing = modelFacingResult(body, limits, outer.untrusted ? { source: "mcp" } : undefined);
  if (facing.reprojected)
    host.transcript.event(c.turnId, host.now(), "limit", {
      limit: "model_context",
      callId: call.id,
      detail: `result projected to ${facing.limit} bytes for ${c.model.ref}`,
    });
  const pending: PendingClientCall[] | undefined =
    body.status === "waiting" && body.pendingToolCalls?.length ? body.pendingToolCalls.map((p) => ({ ...p, runId: body.runId })) : undefined;
  return {
    content: facing.text,
    isError: body.status === "failed",
    status: typeof body.status === "string" ? body.status : "completed",
    untrusted: facing.untrusted,
    ...(pending ? { pending } : {}),
  };
}

/** The transcript stores `exec` source redacted; everything else as the model sent or read it. */
function storedMessage(message: ModelMessage, redaction: RedactionOptions): ModelMessage {
  if (message.role !== "assistant" || !message.toolCalls) return message;
  return { ...message, toolCalls: message.toolCalls.map((t) => ({ ...t, input: storedInput(t.name, t.input, redaction) })) };
}

function answer(host: ChatHost, tenantId: string, turnId: string, state: ChatState, model: ResolvedModel, end: LoopEnd): ChatAnswer {
  // Counters move during the loop (bridge calls): read them after it.
  const turn = host.turn(tenantId, turnId);
  const meta = chatMeta(
    state,
    { codeModeEngaged: turn?.spec.codeModeEngaged ?? false, counters: turn?.counters ?? { search: 0, describe: 0, call: 0 } },
    costUsd(state.usage, model.cost),
  );
  return end.status === "waiting"
    ? { turnId, status: "waiting", pendingToolCalls: end.pending, meta }
    : { turnId, status: "completed", message: { role: "assistant", content: end.text }, meta };
}

function toChatError(error: unknown, signal: AbortSignal | undefined): ChatError {
  if (error instanceof ChatRefused) return error.error;
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
