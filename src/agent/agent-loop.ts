import { ProviderError, type ModelClient, type ModelMessage, type ModelToolCall } from "../providers";
import { MAX_TRANSCRIPT_BYTES } from "../limits";
import { QuotaExceeded } from "../quota";
import type { ModelTool } from "../turns";
import type { ChatEvent, DirectClientAdmission, PendingClientCall } from "./chat-events";
import { addUsage, countToolCall, type ChatState } from "./chat-state";

/** One outer tool call as the model will read it back. */
export type ToolRun = {
  /** Model-facing text (bounded for the model's context; wrapped when network-derived). */
  content: string;
  isError: boolean;
  /** `completed`/`waiting`/`failed` of a code-mode result; `completed`/`failed` otherwise. */
  status: string;
  untrusted: boolean;
  /** Client calls a parked cell waits for: the loop stops and hands them to the caller. */
  pending?: PendingClientCall[];
  /**
   * The call's answer is not this result but a later one (Tool Search: a `tool_call` of a client
   * tool is answered by the client's result, a `tool_search_code` cell by its resumed end): no tool
   * message now; the loop stops with `pending`, and the answer is appended when it exists.
   */
  deferred?: boolean;
  /**
   * Puts the call's end on record. The loop calls it in the step that stores the result (or on its
   * own when no result is stored now, or that step failed).
   */
  record?(): void;
};

/** An outer call whose start is on record: `run` runs it through the session's tool path. */
export type OpenedTool = { run(): Promise<ToolRun> };

export type LoopDeps = {
  client: ModelClient;
  /** Nobody is shown the model's text as it streams (a JSON answer): its answers are read whole. */
  wholeAnswers?: boolean;
  /** Exactly the turn's model-facing tools. */
  tools: ModelTool[];
  signal: AbortSignal;
  /** Model calls this /chat call may still make. */
  maxAssistantTurns: number;
  /** Mutated as the loop runs; the caller persists it. */
  state: ChatState;
  /** A client tool the model called directly (its result comes from the caller). */
  isClientTool(name: string): boolean;
  /**
   * Hooks and approvals for such a call before the caller gets it, recorded under `callId`, the
   * gateway id the caller will answer (absent: handed out as is).
   */
  admitClient?(
    call: ModelToolCall,
    callId: string,
  ): Promise<{ ok: true; input: unknown; admission?: DirectClientAdmission } | { ok: false; message: string }>;
  /**
   * Put one outer call's start on record, to run it through the same path as the tools route
   * (exec/wait/Tool Search/direct). The round's first call is opened in the step that stores the
   * model's reply.
   */
  openTool(call: ModelToolCall): OpenedTool;
  /** Put on record (the trajectory) a call the loop answered itself, without running it. */
  notRun(call: ModelToolCall, reason: NotRunReason): void;
  /**
   * Persist one message: what was stored (exec source redacted), and whether the turn's transcript
   * is now full. The session's storage quota keeps rounds whole: an assistant message with tool
   * calls is stored only together with room held for each call's placeholder result (`reserve`;
   * otherwise it throws src/quota's `QuotaExceeded` and nothing is stored), and each result then
   * goes in whole or, when the session cannot hold it, as its placeholder (`instead`; `refused`
   * says why). `endRound` gives back what the round did not use.
   */
  append(
    message: ModelMessage,
    round?: { reserve: ModelMessage[] } | { instead: ModelMessage },
  ): { message: ModelMessage; full: boolean; refused?: string };
  endRound?(): void;
  emit(event: ChatEvent): void;
  /** What an outer call's input looks like in events (exec source redacted). */
  displayInput(call: ModelToolCall): unknown;
  /** Persist `state` (after each model call and each tool round). */
  saveState(): void;
  /** Writes of one step in one storage transaction (absent: each write is its own); a throw stores none of them. */
  step?<T>(fn: () => T): T;
};

export type LoopEnd = { status: "completed"; text: string } | { status: "waiting"; pending: PendingClientCall[] };

/**
 * Why the loop answered a call without running it: its arguments are not a JSON object, the
 * transcript reached its bound earlier in the round, the session's storage could not hold an
 * earlier result of the round (`quota_exceeded`), or the /chat call was cancelled (the caller
 * went away, or the turn or its session was deleted) before its turn came.
 */
export type NotRunReason = "invalid_arguments" | "transcript_limit" | "quota_exceeded" | "cancelled";

/**
 * The agent loop of one `/chat` call: call the model with the conversation so far, run its tool
 * calls one at a time through the session's tool path, feed the results back, and repeat until
 * the model answers without tool calls, client tools must run, or a bound stops it. Provider
 * replay holds only real model calls: nested activity never becomes a message. Throws only
 * `ProviderError` and `QuotaExceeded` (the caller reports them; the transcript so far is kept, in
 * whole rounds): a cancelled call (`signal`) ends its round, the calls not yet run answered as
 * not run, then throws `aborted`: a cancellation is never a final answer, whatever the cancelled
 * work returned.
 */
export async function runAgentLoop(deps: LoopDeps, messages: ModelMessage[]): Promise<LoopEnd> {
  const { state } = deps;
  let made = 0;
  let lastText = "";
  for (;;) {
    if (made >= deps.maxAssistantTurns) {
      state.stopReason = "max_assistant_turns";
      return { status: "completed", text: lastText };
    }
    const reply = await callModel(deps, messages);
    made++;
    const assistant: ModelMessage = { role: "assistant", content: reply.text, ...(reply.calls.length ? { toolCalls: reply.calls } : {}) };
    // Each call's result if the session's storage cannot hold the real one (room held with the message).
    const placeholders = reply.calls.map(notStored);
    // The model call is on record before its message, in the same step: a message the session
    // cannot store ends the loop (QuotaExceeded) with the transcript at the last whole round and
    // the model call still on record. The conversation holds what was stored (exec source
    // redacted): the same replay within this call as after a pause, and no secret goes back to the provider.
    // The round's first call, when it will run, starts in the same step (its start is on record
    // with the reply that asked for it); it is decided here once, for the round below.
    const first = reply.calls[0];
    const stored = step(deps, () => {
      deps.saveState();
      let kept: ReturnType<LoopDeps["append"]>;
      try {
        kept = deps.append(assistant, { reserve: placeholders });
      } catch (error) {
        return { error };
      }
      const reason = first ? notRunReason(deps, first, kept.full, undefined) : undefined;
      const client = first !== undefined && reason === undefined && deps.isClientTool(first.name);
      let opened: OpenedTool | undefined;
      // A start that cannot be written ends the loop once the reply is stored (the reply stays on record).
      if (first && reason === undefined && !client)
        try {
          opened = deps.openTool(first);
        } catch (error) {
          return { kept, openError: error };
        }
      return { kept, first: { reason, client, opened } };
    });
    if ("error" in stored) throw stored.error;
    if ("openError" in stored) throw stored.openError;
    const { kept } = stored;
    messages.push(kept.message);
    // Once a stored message crosses the transcript bound, nothing more runs: the round's later
    // calls are answered without running (replay needs a result for each) and the loop stops.
    let full = kept.full;
    // Set once a result had to be stored as its placeholder: the same, and the loop ends with quota_exceeded.
    let quotaRefusal: string | undefined;
    if (reply.text !== "") lastText = reply.text;
    if (reply.calls.length === 0) {
      state.stopReason = "final";
      return { status: "completed", text: reply.text };
    }
    const pending: PendingClientCall[] = [];
    // Set once the round's end (its state) was stored with its last result, or failed to be.
    let saved = false as boolean | { error: unknown };
    for (const [i, call] of reply.calls.entries()) {
      deps.emit({ type: "tool_call_start", callId: call.id, name: call.name, input: deps.displayInput(call) });
      const decided = i === 0 ? stored.first : undefined;
      const reason = decided ? decided.reason : notRunReason(deps, call, full, quotaRefusal);
      let refused: ToolRun | undefined = reason !== undefined ? notRunResult(call, reason) : undefined;
      if (reason !== undefined) deps.notRun(call, reason);
      else if (decided ? decided.client : deps.isClientTool(call.name)) {
        // The caller answers a gateway id (a provider's id may repeat across rounds or be any length);
        // the call is on record under it from the start, its policy decision included.
        const callId = `ccall_${crypto.randomUUID()}`;
        // The same policy as any call (hooks, approval) before the caller gets it.
        const admitted = deps.admitClient ? await deps.admitClient(call, callId) : { ok: true as const, input: call.input };
        if (admitted.ok) {
          // The caller runs it; its result arrives through client-results and is appended then.
          countToolCall(state, call.name, false);
          const admission = "admission" in admitted ? admitted.admission : undefined;
          pending.push({ callId, tool: call.name, input: admitted.input, providerCallId: call.id, ...(admission ? { admission } : {}) });
          continue;
        }
        refused = { content: `error: ${admitted.message}`, isError: true, status: "failed", untrusted: false };
      }
      const run = refused ?? (await (decided?.opened ?? deps.openTool(call)).run());
      countToolCall(state, call.name, run.isError);
      if (run.pending) pending.push(...run.pending);
      if (run.deferred && run.pending?.length) {
        run.record?.();
        deps.emit({ type: "tool_call_end", callId: call.id, name: call.name, status: run.status, untrusted: run.untrusted, result: run.content });
        continue;
      }
      const result: ModelMessage = {
        role: "tool",
        toolCallId: call.id,
        toolName: call.name,
        content: run.content,
        ...(run.isError ? { isError: true } : {}),
      };
      // The round's last result and the round's end are one step.
      // The call's end goes on record with them.
      const last = i === reply.calls.length - 1;
      let appended: ReturnType<LoopDeps["append"]>;
      try {
        appended = step(deps, () => {
          run.record?.();
          const a = deps.append(result, { instead: placeholders[i]! });
          if (last) {
            deps.endRound?.();
            // A state the session cannot store does not take the stored result back with it.
            try {
              deps.saveState();
              saved = true;
            } catch (error) {
              saved = { error };
            }
          }
          return a;
        });
      } catch (error) {
        // The step's transaction undid its writes: the call's end goes on record on its own (left
        // open, a reset would report the call lost). The step's failure is the one reported.
        if (deps.step)
          try {
            run.record?.();
          } catch {
            // Reported through `error`.
          }
        throw error;
      }
      messages.push(appended.message);
      if (appended.full) full = true;
      if (appended.refused !== undefined) quotaRefusal ??= appended.refused;
      deps.emit({ type: "tool_call_end", callId: call.id, name: call.name, status: run.status, untrusted: run.untrusted, result: run.content });
    }
    if (typeof saved === "object") throw saved.error;
    if (!saved) {
      deps.endRound?.();
      deps.saveState();
    }
    // Cancelled during the round (whatever the cancelled work answered): the turn did not finish.
    if (deps.signal.aborted) throw new ProviderError("aborted", "the /chat call was cancelled while its tools ran", 0);
    if (quotaRefusal !== undefined) throw new QuotaExceeded(quotaRefusal);
    if (pending.length > 0) {
      state.stopReason = "client_tools";
      return { status: "waiting", pending };
    }
    if (full) {
      state.stopReason = "transcript_limit";
      return { status: "completed", text: lastText };
    }
  }
}

const step = <T>(deps: LoopDeps, fn: () => T): T => (deps.step ? deps.step(fn) : fn());

/** Why `call` is answered without running, if it is (checked in this order). */
function notRunReason(deps: LoopDeps, call: ModelToolCall, full: boolean, quotaRefusal: string | undefined): NotRunReason | undefined {
  if (deps.signal.aborted) return "cancelled";
  if (full) return "transcript_limit";
  if (quotaRefusal !== undefined) return "quota_exceeded";
  if (call.inputError !== undefined) return "invalid_arguments";
  return undefined;
}

/** A result the session's storage could not hold, as the transcript keeps it (a fixed size, reserved with its round). */
function notStored(call: ModelToolCall): ModelMessage {
  return { role: "tool", toolCallId: call.id, toolName: call.name, content: NOT_STORED, isError: true };
}

const NOT_STORED =
  "error: this result was not stored: the session's storage is full (gateway.sessions.maxStoredBytes); the turn stopped after this round";

function notRunResult(call: ModelToolCall, reason: NotRunReason): ToolRun {
  const content =
    reason === "cancelled"
      ? "error: not run: the /chat call was cancelled before it ran"
      : reason === "transcript_limit"
        ? `error: not run: this turn's transcript reached its bound (${MAX_TRANSCRIPT_BYTES} bytes); the turn stops after this round`
        : reason === "quota_exceeded"
          ? "error: not run: the session's storage is full (gateway.sessions.maxStoredBytes); the turn stops after this round"
          : `error: the arguments of ${call.name} are not a JSON object (${call.inputError}); call it again with valid JSON`;
  return { content, isError: true, status: "failed", untrusted: false };
}

async function callModel(deps: LoopDeps, messages: ModelMessage[]): Promise<{ text: string; calls: ModelToolCall[] }> {
  let text = "";
  const calls: ModelToolCall[] = [];
  let finished = false;
  const request = { ...deps.state.sampling, messages, tools: deps.tools, signal: deps.signal, ...(deps.wholeAnswers ? { whole: true } : {}) };
  for await (const event of deps.client.stream(request)) {
    if (event.type === "text-delta") {
      text += event.text;
      deps.emit({ type: "text", delta: event.text });
    } else if (event.type === "tool-call") {
      // Ids repeated within one reply would make the replay ambiguous (Anthropic refuses it): renamed.
      const taken = new Set(calls.map((c) => c.id));
      let id = event.call.id;
      for (let n = 2; taken.has(id); n++) id = `${event.call.id}_${n}`;
      calls.push(id === event.call.id ? event.call : { ...event.call, id });
    } else {
      finished = true;
      deps.state.assistantTurns++;
      addUsage(deps.state.usage, event.usage);
      deps.state.promptBytes += event.requestBytes;
      deps.emit({
        type: "assistant_turn",
        n: deps.state.assistantTurns,
        finishReason: event.finishReason,
        usage: event.usage,
        requestBytes: event.requestBytes,
      });
    }
  }
  if (!finished) throw new ProviderError("provider_unavailable", "the provider's stream ended without finishing the message", 0);
  return { text, calls };
}
