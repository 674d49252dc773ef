import type { ChatRequest } from "../agent";
import type { SessionStore } from "../tools";
import { readChildStream, type ChildOutcome, type ChildResult } from "./child-turn";

/** What a session object lends the sub-agent turns it runs for a parent. */
export type ChildRunsPort = {
  /**
   * The session's `/chat` agent loop (the turn service's). `stored` runs inside the transaction that
   * stores the turn (synchronous, its writes committed with the turn's or not at all).
   */
  chat(
    tenantId: string,
    sessionId: string,
    req: ChatRequest,
    requestId: string,
    stored: (turnId: string) => void,
  ): Promise<ReadableStream<Uint8Array>>;
  /** The session's durable key/value store (written only once the session stores a turn). */
  store: SessionStore;
  /** The session stored a turn (a child session exists for one spawn: stored state means it was started). */
  started(): boolean;
  /** Wake the parent's object: this child stored its result (it resolves once the parent's object took it). */
  tellParent(tenantId: string, parentSessionId: string, childSessionId: string): Promise<void>;
  /** The object's clock (ms). */
  now(): number;
  /** Ask for the object's alarm at `at`: it is shared with expiry, the earliest asked-for time wins. */
  armAlarm(at: number): void;
};

/** In-memory tries when the result could not be stored (the session never opened its turn): nothing durable to retry from. */
const WAKE_TRIES = 4;
/** The alarm's retries of an owed wake-up: 1 s, doubling, at most a minute apart. */
const WAKE_RETRY_MS = 1000;
const WAKE_RETRY_MAX_MS = 60_000;
/** Past the longest parked-run TTL (`snapshotTtlSeconds` ≤ 1 day) no parent run can still wait for it. */
const WAKE_GIVE_UP_MS = 86_400_000;
/** While a turn runs, the alarm looks every 30 s whether it still runs in this incarnation. */
const HEARTBEAT_MS = 30_000;
const LOST_RUN = "the sub-agent's session object restarted while it ran; its transcript keeps what it did";
const RESULT_PREFIX = "swarm:child:";
const RESULT_KEY = (requestId: string) => `${RESULT_PREFIX}${requestId}`;
/** A wake-up the child owes its parent: stored with the result, dropped once the parent's object took it. */
type Wake = { parentSessionId: string; childSessionId: string; attempts: number; since: number; next: number };
/** Whom a running turn answers: stored (as the record, under the result's key) while it runs, replaced by its result. */
type Running = { parentSessionId: string; childSessionId: string; since: number };
type Stored = { tenantId: string; result: ChildResult; wake?: Wake } | { tenantId: string; result?: undefined; running: Running };
type Settled = Extract<Stored, { result: ChildResult }>;

/**
 * The child half of Swarm, in the child's own session object: a sub-agent turn runs here to its
 * end, detached from the parent's call, and its result is stored here before anyone is told.
 * A parent (or the same parent after an eviction) collects it by request id; starting twice
 * never runs the turn twice.
 *
 * The wake-up is owed durably: it is stored in the same record as the result, and the object's
 * alarm (armed with that write) retries it with backoff until the parent's object takes it. The
 * child owes it because only the child knows when its answer is stored, and an alarm is the one
 * timer that survives this object's eviction or reset (a pending setTimeout pins the object in
 * memory and dies with a reset). Polling from the parked parent instead would fire an alarm on the
 * parent all through every child's run; this costs one alarm per child. A wake-up is only a
 * nudge (the parent then reads the stored result), so one delivered twice changes nothing.
 *
 * A turn lost with its object (reset or evicted while it ran) stored no result, so the same
 * record first says it runs: written in the transaction that stores its turn (no reset can fall
 * between the two; under the key its result replaces, so finishing costs no extra write), with a
 * heartbeat alarm. An alarm that finds it while no
 * promise of this incarnation runs it stores the loss as the result, with the wake-up it owes.
 */
export class ChildRuns {
  private readonly running = new Map<string, Promise<ChildResult>>();
  /** Results of this incarnation, also when the session could not store them (its turn never opened). */
  private readonly settled = new Map<string, Settled>();
  /** The turn each running request opened here (a sub-agent's turn, by its parent's request id). */
  private readonly turns = new Map<string, string>();

  constructor(private readonly port: ChildRunsPort) {}

  async start(tenantId: string, sessionId: string, req: ChatRequest, requestId: string, parentSessionId: string): Promise<void> {
    if (this.running.has(requestId) || this.settled.has(requestId)) return;
    if (await this.stored(tenantId, requestId)) return;
    if (this.running.has(requestId) || this.settled.has(requestId)) return;
    if (this.port.started()) {
      // An earlier incarnation started this turn and died with it: its loss is the answer, the
      // turn is not run again (its transcript keeps what it did).
      // The parent asking now reads it at once: no wake-up is owed.
      await this.save(tenantId, requestId, { status: "failed", text: "", sessionId, error: LOST_RUN });
      return;
    }
    const run = this.port
      .chat(tenantId, sessionId, req, requestId, () => this.mark(tenantId, requestId, { parentSessionId, childSessionId: sessionId }))
      .then((stream) => readChildStream(stream, sessionId, (turnId) => this.turns.set(requestId, turnId)))
      .catch((error: unknown): ChildResult => ({ status: "failed", text: "", sessionId, error: `the sub-agent failed: ${String(error)}` }))
      .then(async (result) => {
        // Stored here, with the wake-up it owes, before the parent is told.
        const wake = { parentSessionId, childSessionId: sessionId };
        if (await this.save(tenantId, requestId, result, wake)) await this.tell(requestId);
        else await this.wakeParent(tenantId, parentSessionId, sessionId);
        return result;
      })
      .finally(() => {
        this.running.delete(requestId);
        this.turns.delete(requestId);
      });
    this.running.set(requestId, run);
  }

  /** The turn a running sub-agent request opened here, if it has one. */
  turnOf(requestId: string): string | undefined {
    return this.turns.get(requestId);
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
    if (this.port.started()) return { status: "failed", text: "", sessionId: "", error: LOST_RUN };
    return { status: "unknown" };
  }

  /**
   * The alarm went off: tell the parents still owed a wake-up whose retry is due, re-arm for the
   * rest. Safe to run any time (an early or repeated alarm tells a parent at most once more).
   */
  async retryWakes(): Promise<void> {
    const now = this.port.now();
    const owed = await this.port.store.list(RESULT_PREFIX, 64).catch(() => []);
    await Promise.all(
      owed.map(async ({ key, value }) => {
        const requestId = key.slice(RESULT_PREFIX.length);
        const record = value as Stored | undefined;
        if (record?.result === undefined) return record ? this.heartbeat(requestId, record, now) : undefined;
        const wake = record.wake;
        if (!wake) return;
        const here = this.settled.get(requestId);
        // Told by this incarnation: only the record is left to update (kept off the parent's path).
        if (here && !here.wake) return this.keep(requestId, here).catch(() => undefined);
        if (wake.next > now) return this.port.armAlarm(wake.next);
        await this.tell(requestId, record);
        await this.keepTold(requestId);
      }),
    );
  }

  /** A turn stored as running: re-armed while it runs here; lost with an earlier incarnation, its loss is its result. */
  private async heartbeat(requestId: string, record: Extract<Stored, { running: Running }>, now: number): Promise<void> {
    if (this.running.has(requestId)) return this.port.armAlarm(now + HEARTBEAT_MS);
    const here = this.settled.get(requestId);
    if (here) {
      // Finished here, but its record was not written: again (the owed wake-up keeps its own retry time).
      await this.keep(requestId, here).catch(() => undefined);
      if (here.wake) this.port.armAlarm(here.wake.next);
      return;
    }
    const { parentSessionId, childSessionId } = record.running;
    const lost: ChildResult = { status: "failed", text: "", sessionId: childSessionId, error: LOST_RUN };
    if (await this.save(record.tenantId, requestId, lost, { parentSessionId, childSessionId })) await this.tell(requestId);
    await this.keepTold(requestId);
  }

  /**
   * The turn is being stored here: stored as running too (whom it answers), watched by the heartbeat
   * alarm. Synchronous: the store's put does its write before it returns its promise.
   */
  private mark(tenantId: string, requestId: string, to: Omit<Running, "since">): void {
    if (this.settled.has(requestId)) return;
    const now = this.port.now();
    this.port.armAlarm(now + HEARTBEAT_MS);
    // Not written (a full session): the turn runs unwatched, as before the marker existed.
    this.port.store.put(RESULT_KEY(requestId), { tenantId, running: { ...to, since: now } } satisfies Stored).catch(() => undefined);
  }

  /** A wake-up taken during the alarm: its record is updated now (off the parent's path). */
  private async keepTold(requestId: string): Promise<void> {
    const after = this.settled.get(requestId);
    if (after && !after.wake) await this.keep(requestId, after).catch(() => undefined);
  }

  /** One try at the owed wake-up of `requestId`: taken, it is dropped; refused, the alarm retries later. */
  private async tell(requestId: string, record: Settled | undefined = this.settled.get(requestId)): Promise<void> {
    const wake = record?.wake;
    if (!record || !wake) return;
    const owedNothing = { tenantId: record.tenantId, result: record.result };
    const told = await this.port.tellParent(record.tenantId, wake.parentSessionId, wake.childSessionId).then(
      () => true,
      () => false,
    );
    const now = this.port.now();
    // Told: the record is updated by the alarm already asked for, not now (the parent is about to
    // read the result here, and a write would hold that answer until it is stored).
    if (told) return void this.settled.set(requestId, owedNothing);
    if (now - wake.since >= WAKE_GIVE_UP_MS) return this.keep(requestId, owedNothing).catch(() => undefined);
    const attempts = wake.attempts + 1;
    const next = now + Math.min(WAKE_RETRY_MAX_MS, WAKE_RETRY_MS * 2 ** (attempts - 1));
    // A failed write leaves the wake-up owed as it was: the parent is told once more, which changes nothing.
    await this.keep(requestId, { ...record, wake: { ...wake, attempts, next } }).catch(() => undefined);
    this.port.armAlarm(next);
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
    // A record without a result says the turn runs (or ran, in an earlier incarnation).
    return record && record.tenantId === tenantId ? record.result : undefined;
  }

  /**
   * The result and the wake-up it owes, in one record (one write: neither is stored without the
   * other), and the alarm that retries the wake-up if this incarnation cannot. True when stored.
   */
  private async save(
    tenantId: string,
    requestId: string,
    result: ChildResult,
    to?: Pick<Wake, "parentSessionId" | "childSessionId">,
  ): Promise<boolean> {
    const now = this.port.now();
    const record: Settled = { tenantId, result, ...(to ? { wake: { ...to, attempts: 0, since: now, next: now + WAKE_RETRY_MS } } : {}) };
    this.settled.set(requestId, record);
    if (!this.port.started()) return false;
    // Asked first: a reset right after the write still finds the alarm (one that finds nothing owed does nothing).
    if (to) this.port.armAlarm(now + WAKE_RETRY_MS);
    return this.keep(requestId, record).then(
      () => true,
      () => false,
    );
  }

  private async keep(requestId: string, record: Settled): Promise<void> {
    this.settled.set(requestId, record);
    await this.port.store.put(RESULT_KEY(requestId), record);
  }
}
