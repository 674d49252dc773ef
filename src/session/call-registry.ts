import type { Clock } from "../runtime";

/**
 * The calls a session object is running, by turn: each one's abort controller, so deleting a
 * turn or the session, or the HTTP client going away (`cancel(requestId)`), stops its work. And
 * the cell queue: cells of one session run one at a time (input gates open while tools are
 * awaited), and queued work shares the execution deadline from when it was admitted (seed 002).
 *
 * `track` hands back a disposable handle: `using call = registry.track(…)` untracks it however
 * the call ends.
 */
export class CallRegistry {
  private readonly active = new Map<string, Set<AbortController>>();
  /**
   * The calls of each HTTP request: a /chat request's loop and the outer calls it runs carry the
   * same request id, so cancelling the request must reach all of them, whichever ended first.
   */
  private readonly byRequest = new Map<string, Set<AbortController>>();
  /** Requests cancelled before their call arrived, remembered briefly so the call starts aborted. */
  private readonly cancelledEarly = new Set<string>();
  private readonly detach = new WeakMap<AbortController, () => void>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly clock: () => Clock) {}

  /**
   * Run `fn` after every cell queued before it. `fn` gets the time the work was admitted: its
   * deadline counts from there, not from when it starts.
   */
  serial<T>(fn: (admittedAt: number) => Promise<T>): Promise<T> {
    const admittedAt = this.clock().now();
    const run = () => fn(admittedAt);
    const next = this.queue.then(run, run);
    // The queue only orders cells; each caller gets (and reports) its own failure.
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Track one call of `turnId`. `parent`: the /chat call it runs under (cancelling it cancels this call). */
  track(turnId: string, requestId?: string, parent?: AbortSignal): TrackedCall {
    const c = new AbortController();
    if (parent) {
      if (parent.aborted) c.abort();
      else {
        const onAbort = () => c.abort();
        parent.addEventListener("abort", onAbort, { once: true });
        this.detach.set(c, () => parent.removeEventListener("abort", onAbort));
      }
    }
    if (requestId !== undefined) {
      if (this.cancelledEarly.has(requestId)) c.abort();
      let calls = this.byRequest.get(requestId);
      if (!calls) this.byRequest.set(requestId, (calls = new Set()));
      calls.add(c);
    }
    let set = this.active.get(turnId);
    if (!set) this.active.set(turnId, (set = new Set()));
    set.add(c);
    let done = false;
    const untrack = () => {
      if (done) return;
      done = true;
      this.untrack(turnId, c, requestId);
    };
    return { signal: c.signal, abort: () => c.abort(), untrack, [Symbol.dispose]: untrack };
  }

  /** The HTTP client of `requestId` went away: cancel that call's active work. */
  cancel(requestId: string): void {
    const calls = this.byRequest.get(requestId);
    if (calls) for (const c of calls) c.abort();
    else {
      // The call may not have reached the object yet; remember briefly so it starts aborted.
      this.cancelledEarly.add(requestId);
      setTimeout(() => this.cancelledEarly.delete(requestId), 60_000);
    }
  }

  /** Calls running now, by turn (read-only: what tests and operators may look at). */
  running(): Record<string, number> {
    return Object.fromEntries([...this.active].map(([turnId, set]) => [turnId, set.size]));
  }

  isActive(turnId: string): boolean {
    return this.active.has(turnId);
  }

  get idle(): boolean {
    return this.active.size === 0;
  }

  abortTurn(turnId: string): void {
    for (const c of this.active.get(turnId) ?? []) c.abort();
  }

  abortAll(): void {
    for (const set of this.active.values()) for (const c of set) c.abort();
  }

  private untrack(turnId: string, c: AbortController, requestId?: string): void {
    this.detach.get(c)?.();
    this.detach.delete(c);
    const calls = requestId === undefined ? undefined : this.byRequest.get(requestId);
    calls?.delete(c);
    if (calls && calls.size === 0) this.byRequest.delete(requestId!);
    const set = this.active.get(turnId);
    set?.delete(c);
    if (set && set.size === 0) this.active.delete(turnId);
  }
}

/** One tracked call: its signal, and its end (safe to call twice; `using` calls it). */
export type TrackedCall = { signal: AbortSignal; abort(): void; untrack(): void; [Symbol.dispose](): void };
