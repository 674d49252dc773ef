import type { CodeModePendingToolCall } from "../code-mode";
import type { ChatErrorCode } from "../errors";

export type { ChatErrorCode };
import type { FinishReason, ModelUsage } from "../providers";

/**
 * What one `/chat` call reports, in order. The session object writes these as NDJSON over RPC;
 * the HTTP edge answers JSON (the last event) or re-frames each as a server-sent event
 * (`event: <type>`, `data: <json>`). Starts and partial updates are transient; the transcript
 * and trajectory keep what completed.
 */
/** The Swarm sub-agents a turn started, rolled up (src/swarm/child-rollup.ts): totals, then each child. */
export type SubAgents = {
  count: number;
  assistantTurns: number;
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
  costUsd: number;
  children: Array<{
    label?: string;
    sessionId: string;
    turnId?: string;
    status: string;
    durationMs?: number;
    assistantTurns: number;
    costUsd?: number;
    error?: string;
    /** The child's own trajectory (same tenant). */
    trajectory?: string;
  }>;
};

export type ChatMeta = {
  /** True only when code mode owned the model tool surface of this turn. */
  codeModeEngaged: boolean;
  /** Completed provider round trips across the turn (every /chat call of it). */
  assistantTurns: number;
  /** The turn's cumulative inner bridge counts; these never reach the provider. */
  bridgeCalls: { search: number; describe: number; call: number };
  /** From the model's cost config and the turn's usage; absent when the model has no cost data. */
  costUsd?: number;
  /** Provider-visible outer tool calls. */
  toolSummary: { calls: number; tools: string[]; failures: number };
  usage: ModelUsage;
  /** UTF-8 bytes of every request body sent to the provider for this turn. */
  promptBytes: number;
  /** Why the turn's last /chat call ended; absent (trajectory only) while a /chat call runs the turn. */
  stopReason?: StopReason;
  /** Swarm: the sub-agents the turn started, rolled up (their turns, usage and cost are not in the fields above). */
  subAgents?: SubAgents;
};

/** A final answer, client tools to run, a bound, or the failure that stopped the turn (its error code). */
export type StopReason = "final" | "client_tools" | "max_assistant_turns" | "transcript_limit" | ChatErrorCode;

/** A call the caller runs: a client tool the model called directly, or one a parked cell is waiting on (`runId`). */
export type PendingClientCall = CodeModePendingToolCall & {
  runId?: string;
  /** Kept by the gateway, never shown: the provider's own id of a directly called client tool. */
  providerCallId?: string;
  /** Kept by the gateway, never shown: how a directly called client tool was admitted (its log record is written when its result arrives). */
  admission?: DirectClientAdmission;
  /** Kept by the gateway, never shown: handed out by Tool Search's `tool_call` (its result answers that call). */
  via?: "tool_call";
};

/** The policy decision on a client tool the model called directly, and when the call started. */
export type DirectClientAdmission = { decision: string; startedAt: number };

/** A pending call as the caller sees it: the gateway's own bookkeeping stays inside. */
export function shownCall({ providerCallId: _p, admission: _a, via: _v, ...call }: PendingClientCall): PendingClientCall {
  return call;
}

export type ChatAnswer = {
  turnId: string;
  status: "completed" | "waiting";
  message?: { role: "assistant"; content: string };
  pendingToolCalls?: PendingClientCall[];
  meta: ChatMeta;
};

export type ChatError = { code: ChatErrorCode; message: string; providerStatus?: number; retryAfterSeconds?: number };

export type ChatEvent =
  | { type: "turn"; turnId: string; codeModeEngaged: boolean; continued: boolean }
  | { type: "text"; delta: string }
  | { type: "assistant_turn"; n: number; finishReason: FinishReason; usage: ModelUsage; requestBytes: number }
  | { type: "tool_call_start"; callId: string; name: string; input: unknown }
  | { type: "nested_call"; parentCallId: string; invocationId: string; tool: string; source: string; ok: boolean; durationMs: number }
  /** A running tool's partial update (transient: never stored). `partial` is a bounded, redacted preview. */
  | { type: "tool_update"; parentCallId: string; invocationId?: string; tool: string; partial: string }
  | { type: "tool_call_end"; callId: string; name: string; status: string; untrusted: boolean; result: string }
  | { type: "done"; answer: ChatAnswer }
  | { type: "error"; error: ChatError; turnId?: string; meta?: ChatMeta };

const encoder = new TextEncoder();

export function encodeEvent(event: ChatEvent): Uint8Array {
  return encoder.encode(JSON.stringify(event) + "\n");
}

/** One server-sent event: the type as the SSE event name, the JSON as its data (one line: JSON has no raw newlines). */
export function sseFrame(event: ChatEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Splits an NDJSON byte stream into events (a line never contains a raw newline: JSON escapes them).
 * `stop` cancels the source at once, even while a read is pending: a generator's own `return()`
 * waits for that read, i.e. for the source's next event, which a quiet turn may not send for minutes.
 */
export async function* readEvents(stream: ReadableStream<Uint8Array>, stop?: AbortSignal): AsyncGenerator<ChatEvent> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let buffered = "";
  let finished = false;
  const onStop = () => void reader.cancel().catch(() => undefined);
  if (stop?.aborted) onStop();
  else stop?.addEventListener("abort", onStop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || stop?.aborted) break;
      buffered += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.trim() !== "") yield JSON.parse(line) as ChatEvent;
      }
    }
    finished = true;
    if (stop?.aborted) return; // cancelled: a partial line is not an event
    buffered += decoder.decode();
    if (buffered.trim() !== "") yield JSON.parse(buffered) as ChatEvent;
  } finally {
    // A consumer that stops early cancels the source (the session object then cancels the turn).
    stop?.removeEventListener("abort", onStop);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
