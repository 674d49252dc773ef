import { readEvents, type ChatMeta, type ChatRequest } from "../agent";

/** A child's outcome as its own session object answers it: a result, still running, or unknown there. */
export type ChildOutcome = ChildResult | { status: "running" } | { status: "unknown" };

/**
 * What a session object answers a Swarm parent (src/session/session-rpc.ts): a child turn started
 * detached from the caller (it runs to completion in its own object whatever happens to the
 * parent), its outcome by request id (waiting up to `waitMs`), and its cancellation.
 */
export type ChildSessionRpc = {
  startChild(tenantId: string, sessionId: string, req: ChatRequest, requestId: string, parentSessionId: string): Promise<void>;
  childResult(tenantId: string, requestId: string, waitMs: number): Promise<ChildOutcome>;
  cancelRequest(requestId: string): Promise<void>;
  /** The child told its parent's object that it stored its result (a wake-up: the parent then reads it). */
  childSettled(childSessionId: string): Promise<void>;
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
  /** When the parent started it and when its answer reached the parent (the parent's clock, ms). */
  startedAt?: number;
  endedAt?: number;
};

/** The most text of a child's answer a parent gets (the child's own transcript keeps all of it). */
export const MAX_CHILD_TEXT_CHARS = 32_768;

/** Waiters of this isolate for a child's wake-up, by child session id. */
const wakeups = new Map<string, Set<() => void>>();

function wakeup(childSessionId: string): { promise: Promise<void>; cancel(): void } {
  let waiters = wakeups.get(childSessionId);
  if (!waiters) wakeups.set(childSessionId, (waiters = new Set()));
  let wake!: () => void;
  const promise = new Promise<void>((resolve) => (wake = resolve));
  waiters.add(wake);
  const cancel = () => {
    waiters.delete(wake);
    if (waiters.size === 0 && wakeups.get(childSessionId) === waiters) wakeups.delete(childSessionId);
  };
  return { promise, cancel };
}

/** A child stored its result: wake whoever in this isolate waits for it (they read it from the child). */
export function childSettled(childSessionId: string): void {
  const waiters = wakeups.get(childSessionId);
  wakeups.delete(childSessionId);
  for (const wake of waiters ?? []) wake();
}

/** A child session object by its session id (same tenant: its object name is the edge's). */
export function childStub(sessions: SessionsBinding, tenantId: string, sessionId: string): ChildSessionRpc {
  return sessions.get(sessions.idFromName(`${tenantId}:${sessionId}`));
}

/**
 * Runs one child turn, or re-attaches to it: `startChild` is idempotent by request id (a child
 * already started, or finished, is not started again), then its outcome is collected from the
 * child's object. The child never depends on this call: an evicted parent issues it again and
 * gets the same answer. `signal` cancels the child (the RPC the HTTP edge uses when a client goes away).
 */
export async function runChildTurn(
  sessions: SessionsBinding,
  call: { tenantId: string; sessionId: string; parentSessionId: string; requestId: string; req?: ChatRequest; label?: string },
  signal: AbortSignal,
): Promise<ChildResult> {
  const base = { sessionId: call.sessionId, ...(call.label !== undefined ? { label: call.label } : {}) };
  const failed = (error: string): ChildResult => ({ status: "failed", text: "", ...base, error });
  if (signal.aborted) return failed("the sub-agent was cancelled before it started");
  let stub = childStub(sessions, call.tenantId, call.sessionId);
  // A stub that reached a child object which was reset since is broken for good: the wake-up from
  // the child's next incarnation is read through a fresh one (once per answer, then it fails).
  let fresh = 1;
  const cancel = () => void stub.cancelRequest(call.requestId).catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  try {
    if (call.req) await stub.startChild(call.tenantId, call.sessionId, call.req, call.requestId, call.parentSessionId);
    for (;;) {
      // Listening before asking: a wake-up between the answer and the wait is not missed.
      const woken = wakeup(call.sessionId);
      try {
        let outcome: ChildOutcome | undefined;
        try {
          outcome = await Promise.race([stub.childResult(call.tenantId, call.requestId, 0), aborted(signal)]);
        } catch (error) {
          if (fresh-- <= 0 || signal.aborted) throw error;
          stub = childStub(sessions, call.tenantId, call.sessionId);
          continue;
        }
        fresh = 1;
        if (signal.aborted || outcome === undefined) return failed("the sub-agent was cancelled");
        if (outcome.status === "unknown") return failed("the sub-agent's session has no such sub-agent turn: it never started");
        if (outcome.status !== "running") return { ...outcome, ...base };
        // No timer and no open request while waiting: the parent's object stays evictable, and
        // the child's wake-up (childSettled) or the parent's next incarnation ends the wait.
        await Promise.race([woken.promise, aborted(signal)]);
      } finally {
        woken.cancel();
      }
    }
  } catch (error) {
    if (signal.aborted) return failed("the sub-agent was cancelled");
    return failed(`the sub-agent's session could not be reached: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

/** A child's `/chat` event stream read to its end, as the child's result (its own object reads it); `opened`: its turn is stored. */
export async function readChildStream(
  stream: ReadableStream<Uint8Array>,
  sessionId: string,
  opened?: (turnId: string) => void,
): Promise<ChildResult> {
  const failed = (error: string, more: Partial<ChildResult> = {}): ChildResult => ({ status: "failed", text: "", sessionId, ...more, error });
  let turnId: string | undefined;
  let text = "";
  for await (const event of readEvents(stream)) {
    if (event.type === "turn") {
      turnId = event.turnId;
      opened?.(event.turnId);
    } else if (event.type === "done") {
      const answer = event.answer;
      const ids = { turnId: answer.turnId, meta: answer.meta };
      if (answer.status !== "completed")
        return failed("the sub-agent stopped waiting for client tools, which sub-agents cannot run", { ...ids, text: bounded(text) });
      return { status: "completed", text: bounded(answer.message?.content ?? text), sessionId, ...ids };
    } else if (event.type === "error") {
      return failed(`the sub-agent failed (${event.error.code}): ${event.error.message}`, {
        ...((event.turnId ?? turnId) ? { turnId: event.turnId ?? turnId } : {}),
        ...(event.meta ? { meta: event.meta } : {}),
      });
    } else if (event.type === "text") text += event.delta;
  }
  return failed("the sub-agent's stream ended without an answer", turnId ? { turnId } : {});
}

export function aborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => (signal.aborted ? resolve(undefined) : signal.addEventListener("abort", () => resolve(undefined), { once: true })));
}

function bounded(text: string): string {
  return text.length > MAX_CHILD_TEXT_CHARS ? text.slice(0, MAX_CHILD_TEXT_CHARS) + "…" : text;
}
