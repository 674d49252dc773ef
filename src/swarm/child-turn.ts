import { readEvents, type ChatMeta, type ChatRequest } from "../agent";

/** What a session object answers a Swarm parent: the `/chat` loop and its cancellation (src/session/session-rpc.ts). */
export type ChildSessionRpc = {
  chat(tenantId: string, sessionId: string, req: ChatRequest, requestId: string): Promise<ReadableStream<Uint8Array>>;
  cancelRequest(requestId: string): Promise<void>;
};

/** The `SESSIONS` binding as a Swarm tool reads it from `ctx.env`. */
export type SessionsBinding = {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): ChildSessionRpc;
};

/** One sub-agent's answer: a value whatever happened (a failed child is a result, not a throw). */
export type ChildResult = {
  status: "completed" | "failed";
  text: string;
  /** The child turn's meta (assistant turns, usage, costUsd); absent when it never opened. */
  meta?: ChatMeta;
  sessionId: string;
  /** Absent when the child turn never opened. */
  turnId?: string;
  label?: string;
  error?: string;
};

/** The most text of a child's answer a parent gets (the child's own transcript keeps all of it). */
export const MAX_CHILD_TEXT_CHARS = 32_768;

/**
 * Runs one child turn: the `/chat` agent loop of its own session object (same tenant, so the
 * caller can read its trajectory as any session's), through the session RPC. `signal` cancels it
 * with the RPC the HTTP edge uses when a client goes away.
 */
export async function runChildTurn(
  sessions: SessionsBinding,
  call: { tenantId: string; sessionId: string; requestId: string; req: ChatRequest; label?: string },
  signal: AbortSignal,
): Promise<ChildResult> {
  const base = { sessionId: call.sessionId, ...(call.label !== undefined ? { label: call.label } : {}) };
  const failed = (error: string, more: Partial<ChildResult> = {}): ChildResult => ({ status: "failed", text: "", ...base, ...more, error });
  if (signal.aborted) return failed("the sub-agent was cancelled before it started");
  const stub = sessions.get(sessions.idFromName(`${call.tenantId}:${call.sessionId}`));
  const cancel = () => void stub.cancelRequest(call.requestId).catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  let turnId: string | undefined;
  try {
    const stream = await stub.chat(call.tenantId, call.sessionId, call.req, call.requestId);
    let text = "";
    for await (const event of readEvents(stream, signal)) {
      if (event.type === "turn") turnId = event.turnId;
      else if (event.type === "done") {
        const answer = event.answer;
        const ids = { turnId: answer.turnId, meta: answer.meta };
        if (answer.status !== "completed")
          return failed("the sub-agent stopped waiting for client tools, which sub-agents cannot run", { ...ids, text: bounded(text) });
        return { status: "completed", text: bounded(answer.message?.content ?? text), ...base, ...ids };
      } else if (event.type === "error") {
        return failed(`the sub-agent failed (${event.error.code}): ${event.error.message}`, {
          ...((event.turnId ?? turnId) ? { turnId: event.turnId ?? turnId } : {}),
          ...(event.meta ? { meta: event.meta } : {}),
        });
      } else if (event.type === "text") text += event.delta;
    }
    return failed(signal.aborted ? "the sub-agent was cancelled" : "the sub-agent's stream ended without an answer", turnId ? { turnId } : {});
  } catch (error) {
    if (signal.aborted) return failed("the sub-agent was cancelled", turnId ? { turnId } : {});
    return failed(`the sub-agent's session could not be reached: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

function bounded(text: string): string {
  return text.length > MAX_CHILD_TEXT_CHARS ? text.slice(0, MAX_CHILD_TEXT_CHARS) + "…" : text;
}
