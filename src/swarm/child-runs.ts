import type { ChatRequest } from "../agent";
import type { SessionStore } from "../tools";
import { readChildStream, type ChildOutcome, type ChildResult } from "./child-turn";

/** What a session object lends the sub-agent turns it runs for a parent. */
export type ChildRunsPort = {
  /** The session's `/chat` agent loop (the turn service's). */
  chat(tenantId: string, sessionId: string, req: ChatRequest, requestId: string): Promise<ReadableStream<Uint8Array>>;
  /** The session's durable key/value store (written only once the session stores a turn). */
  store: SessionStore;
  /** The session stored a turn (a child session exists for one spawn: stored state means it was started). */
  started(): boolean;
  /** Wake the parent's object: this child stored its result (best effort; the parent also asks again). */
  tellParent(tenantId: string, parentSessionId: string, childSessionId: string): Promise<void>;
};

const WAKE_TRIES = 4;
const RESULT_KEY = (requestId: string) => `swarm:child:${requestId}`;
type Stored = { tenantId: string; result: ChildResult };

/**
 * The child half of Swarm, in the child's own session object: a sub-agent turn runs here to its
 * end, detached from the parent's call, and its result is stored here before anyone is told.
 * A parent (or the same parent after an eviction) collects it by request id; starting twice
 * never runs the turn twice.
 */
export class ChildRuns {
  private readonly running = new Map<string, Promise<ChildResult>>();
  /** Results of this incarnation, also when the session could not store them (its turn never opened). */
  private readonly settled = new Map<string, Stored>();

  constructor(private readonly port: ChildRunsPort) {}

  async start(tenantId: string, sessionId: string, req: ChatRequest, requestId: string, parentSessionId: string): Promise<void> {
    if (this.running.has(requestId) || this.settled.has(requestId)) return;
    if (await this.stored(tenantId, requestId)) return;
    if (this.running.has(requestId) || this.settled.has(requestId)) return;
    if (this.port.started()) {
      // An earlier incarnation started this turn and died with it: its loss is the answer, the
      // turn is not run again (its transcript keeps what it did).
      const error = "the sub-agent's session object restarted while it ran; its transcript keeps what it did";
      return this.save(tenantId, requestId, { status: "failed", text: "", sessionId, error });
    }
    const run = this.port
      .chat(tenantId, sessionId, req, requestId)
      .then((stream) => readChildStream(stream, sessionId))
      .catch((error: unknown): ChildResult => ({ status: "failed", text: "", sessionId, error: `the sub-agent failed: ${String(error)}` }))
      .then(async (result) => {
        // Stored here before the parent is told.
        await this.save(tenantId, requestId, result);
        await this.wakeParent(tenantId, parentSessionId, sessionId);
        return result;
      })
      .finally(() => this.running.delete(requestId));
    this.running.set(requestId, run);
  }

  /** The outcome of `requestId`, waiting up to `waitMs` while it runs here. */
  async result(tenantId: string, requestId: string, waitMs: number): Promise<ChildOutcome> {
    const running = this.running.get(requestId);
    if (running) {
      let timer: ReturnType<typeof setTimeout> | null = null;
      const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, Math.max(0, waitMs))));
      await Promise.race([running.catch(() => undefined), timeout]);
      if (timer !== null) clearTimeout(timer);
    }
    const stored = await this.stored(tenantId, requestId);
    if (stored) return stored;
    if (this.running.has(requestId)) return { status: "running" };
    // Asked without a start (agents_wait after the parent restarted): a started session with no
    // result lost its run with an earlier incarnation.
    if (this.port.started())
      return {
        status: "failed",
        text: "",
        sessionId: "",
        error: "the sub-agent's session object restarted while it ran; its transcript keeps what it did",
      };
    return { status: "unknown" };
  }

  /** The parent waits for this wake-up (it holds no request open): a few tries, then the parent's own next ask. */
  private async wakeParent(tenantId: string, parentSessionId: string, sessionId: string): Promise<void> {
    for (let attempt = 0; attempt < WAKE_TRIES; attempt++) {
      try {
        return await this.port.tellParent(tenantId, parentSessionId, sessionId);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
      }
    }
  }

  private async stored(tenantId: string, requestId: string): Promise<ChildResult | undefined> {
    const record = this.settled.get(requestId) ?? ((await this.port.store.get(RESULT_KEY(requestId))) as Stored | undefined);
    return record && record.tenantId === tenantId ? record.result : undefined;
  }

  private async save(tenantId: string, requestId: string, result: ChildResult): Promise<void> {
    const record: Stored = { tenantId, result };
    this.settled.set(requestId, record);
    if (this.port.started()) await this.port.store.put(RESULT_KEY(requestId), record).catch(() => undefined);
  }
}
