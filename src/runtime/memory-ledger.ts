import type { Clock } from "./clock";

const MiB = 1024 * 1024;

/**
 * The platform's memory limit for one Workers isolate. Durable Objects of one class may
 * share an isolate (and its module globals); when the isolate exceeds this, the platform
 * resets every object in it, whichever tenant's cell pushed it over.
 */
export const PLATFORM_ISOLATE_MEMORY_BYTES = 128 * MiB;

/**
 * Default VM memory budget per isolate: 80 MiB for QuickJS VMs leaves 48 MiB for the host
 * (the Worker's and the session objects' own JS heaps, the TypeScript compiler once a
 * TypeScript cell loaded it, snapshot buffers while parking and restoring).
 */
export const DEFAULT_ISOLATE_VM_MEMORY_BYTES = 80 * MiB;

/** Bounds of `isolateVmMemoryBytes`: room for one smallest VM, at most the platform limit. */
export const MIN_ISOLATE_VM_MEMORY_BYTES = 4 * MiB;
export const MAX_ISOLATE_VM_MEMORY_BYTES = PLATFORM_ISOLATE_MEMORY_BYTES;

/**
 * What a VM is reserved before it exists: the linear memory a fresh VM holds. Measured with
 * quickjs-wasi 3.7.0: a fresh VM is 1.31 MiB of linear memory with 0.15 MiB allocated (static
 * data and the wasm stack, ~1.16 MiB); with the prelude of guest ABI 6 (namespaces, Swarm) it
 * holds 1.5625 MiB (25 pages of 64 KiB). From then on a VM's reservation follows its linear
 * memory (which never shrinks), and it grows only while the isolate has room (GuestVm).
 */
export const VM_OVERHEAD_BYTES = 1.5625 * MiB;

/** One VM's share of the ledger. Owned by the VM it was reserved for (GuestVm releases it). */
export interface MemoryReservation {
  readonly bytes: number;
  readonly released: boolean;
  /**
   * Raise the reservation to `bytes` the VM really holds. Never refused: the memory exists
   * already, so the ledger may go past its budget, and later VMs wait until it is released.
   */
  cover(bytes: number): void;
  /** Bytes the isolate can still grant (0 when it is full or past its budget). */
  room(): number;
  /** The model-facing description of an isolate with no room left for this VM to grow. */
  shortage(): string;
  /** Room is short for this VM to grow: give up what can be given up (the pool's spare). */
  reclaim(): void;
  /** Give the bytes back; safe to call more than once. */
  release(): void;
  /** The session object now responsible for it (a spare VM changes hands when a cell takes it). */
  assign(owner: string | null): void;
}

/** How long a reservation may wait: until the cell's own deadline, or until it is aborted. */
export type RoomWait = { deadline: number; clock: Clock; signal: AbortSignal; owner: string | null };

export type RoomOutcome =
  { ok: true; reservation: MemoryReservation } | { ok: false; reason: "exhausted"; message: string } | { ok: false; reason: "aborted" };

/** A queued request; `granted` is set (room taken) when it reaches the head and fits. */
type Waiter = { bytes: number; wait: RoomWait; granted: MemoryReservation | null };

/** How often a waiting request looks for its grant (only while it waits). */
const GRANT_POLL_MS = 5;

/**
 * Validate the `isolateVmMemoryBytes` gateway option (an integer number of bytes within
 * [4 MiB, 128 MiB]); absent means the 80 MiB default. Throws at gateway creation.
 */
export function resolveIsolateVmMemoryBytes(value: unknown): number {
  if (value === undefined) return DEFAULT_ISOLATE_VM_MEMORY_BYTES;
  if (typeof value !== "number" || !Number.isInteger(value) || value < MIN_ISOLATE_VM_MEMORY_BYTES || value > MAX_ISOLATE_VM_MEMORY_BYTES) {
    throw new RangeError(
      `isolateVmMemoryBytes must be an integer number of bytes from ${MIN_ISOLATE_VM_MEMORY_BYTES} (4 MiB) to ${MAX_ISOLATE_VM_MEMORY_BYTES} (128 MiB, the platform's isolate limit); got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The live QuickJS VM memory of one isolate, shared by every session object in it. Each VM
 * (cell, resumed cell, spare) is accounted at what it holds, not at its `memoryLimitBytes`:
 * `VM_OVERHEAD_BYTES` before a fresh VM is created, its snapshot's memory before it is
 * restored (`raise`), then its linear memory as it grows; disposing it gives all of it back.
 * A request that does not fit waits, first come first served, until room is released or its
 * deadline passes. A running VM grows without waiting, only into `roomBytes` (GuestVm sets
 * its engine's allocation limit from it), so idle cells hold only what they use and many
 * run at once. Pure bookkeeping: it never touches a VM itself.
 */
export class MemoryLedger {
  readonly budgetBytes: number;
  readonly overheadBytes: number;
  private used = 0;
  private peak = 0;
  private readonly live = new Set<Reservation>();
  private readonly queue: Waiter[] = [];
  /** Asked to give room back (the pool's spare) whenever a request has to wait. */
  private reclaim: (() => void) | null = null;

  constructor(options: { budgetBytes?: number; overheadBytes?: number } = {}) {
    this.budgetBytes = resolveIsolateVmMemoryBytes(options.budgetBytes);
    this.overheadBytes = options.overheadBytes ?? VM_OVERHEAD_BYTES;
  }

  /** The memory limit a VM really gets: `memoryLimitBytes`, clamped so one VM fits the budget. */
  effectiveLimit(memoryLimitBytes: number): number {
    return Math.min(memoryLimitBytes, this.budgetBytes - this.overheadBytes);
  }

  get reservedBytes(): number {
    return this.used;
  }

  /** Highest `reservedBytes` seen since the isolate started. */
  get peakBytes(): number {
    return this.peak;
  }

  /** What the isolate can still grant (0 when full, or past the budget after a cover). */
  get roomBytes(): number {
    return Math.max(0, this.budgetBytes - this.used);
  }

  get reservations(): number {
    return this.live.size;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** The pool registers its spare-dropping here; one reclaimer per ledger. */
  onShortage(reclaim: () => void): void {
    this.reclaim = reclaim;
  }

  /** Room now, without waiting and without jumping the queue; null when it does not fit. */
  tryReserve(bytes: number, owner: string | null = null): MemoryReservation | null {
    if (this.queue.length > 0 || this.used + bytes > this.budgetBytes) return null;
    return this.grant(bytes, owner);
  }

  /**
   * Room now, or once enough is released before `wait.deadline`; aborting stops the wait.
   *
   * Room is usually released by another session object, inside that object's I/O context.
   * Resolving this waiter's promise from there would run the waiting cell's continuation in
   * the wrong context, which workerd refuses ("Cannot perform I/O on behalf of a different
   * Durable Object"). So a release only records the grant (the room is taken at once, in
   * queue order), and the waiter picks it up from its own timer, in its own context.
   */
  reserve(bytes: number, wait: RoomWait): Promise<RoomOutcome> {
    if (wait.signal.aborted) return Promise.resolve({ ok: false, reason: "aborted" });
    const now = this.tryReserve(bytes, wait.owner);
    if (now) return Promise.resolve({ ok: true, reservation: now });
    const remaining = wait.deadline - wait.clock.now();
    if (bytes > this.budgetBytes || remaining <= 0) return Promise.resolve(this.exhausted(bytes));
    return new Promise<RoomOutcome>((resolve) => {
      const waiter: Waiter = { bytes, wait, granted: null };
      const finish = (outcome: RoomOutcome) => {
        clearInterval(poll);
        clearTimeout(timer);
        wait.signal.removeEventListener("abort", onAbort);
        resolve(outcome);
      };
      const leave = () => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        this.pump();
      };
      const onAbort = () => {
        waiter.granted?.release();
        leave();
        finish({ ok: false, reason: "aborted" });
      };
      const poll = setInterval(() => {
        if (waiter.granted) finish({ ok: true, reservation: waiter.granted });
      }, GRANT_POLL_MS);
      // Real timers: an injected clock may be frozen, and time only has to bound the wait.
      const timer = setTimeout(() => {
        if (waiter.granted) return finish({ ok: true, reservation: waiter.granted });
        leave();
        finish(this.exhausted(bytes));
      }, remaining);
      wait.signal.addEventListener("abort", onAbort);
      this.queue.push(waiter);
      this.reclaim?.();
    });
  }

  /**
   * Grow `reservation` to `bytes` (a VM about to be restored from a larger snapshot), waiting
   * like `reserve`; the reservation never dips meanwhile. On failure it keeps what it had.
   */
  async raise(reservation: MemoryReservation, bytes: number, wait: RoomWait): Promise<RoomOutcome> {
    const extra = bytes - reservation.bytes;
    if (extra <= 0 || reservation.released) return { ok: true, reservation };
    if (bytes > this.budgetBytes) return this.exhausted(bytes);
    const room = await this.reserve(extra, wait);
    if (!room.ok) return room.reason === "exhausted" ? this.exhausted(bytes) : room;
    reservation.cover(bytes);
    room.reservation.release();
    return { ok: true, reservation };
  }

  /**
   * A new incarnation of session object `owner` starts: whatever an earlier one still held
   * (a cell cut off by a reset, whose VM nobody will dispose) or waited for is given back.
   * Its waits are only dropped from the queue: their timers died with the old incarnation.
   */
  releaseOwner(owner: string): void {
    // Waits first: room released below must not be granted to a dead waiter.
    for (const w of this.queue.filter((q) => q.wait.owner === owner)) this.queue.splice(this.queue.indexOf(w), 1);
    for (const r of [...this.live]) if (r.owner === owner) r.release();
    this.pump();
  }

  /** The model-facing failure: names the budget and what is in use. */
  exhausted(bytes: number): RoomOutcome {
    return {
      ok: false,
      reason: "exhausted",
      message: `code mode VM memory for this isolate is exhausted (${mib(this.budgetBytes)} MiB budget, ${mib(this.used)} MiB in use, this cell needs ${mib(bytes)} MiB); try again shortly`,
    };
  }

  private grant(bytes: number, owner: string | null): Reservation {
    const r = new Reservation(this.account, bytes, owner);
    this.live.add(r);
    this.account.add(bytes);
    return r;
  }

  /** What reservations may do to the ledger: grow, or give everything back. */
  private readonly account: Account = {
    add: (bytes) => {
      this.used += bytes;
      this.peak = Math.max(this.peak, this.used);
    },
    remove: (r, bytes) => {
      this.live.delete(r);
      this.used -= bytes;
      this.pump();
    },
    room: () => this.roomBytes,
    reclaim: () => this.reclaim?.(),
    shortage: () =>
      `code mode VM memory for this isolate is exhausted (${mib(this.budgetBytes)} MiB budget, ${mib(this.used)} MiB in use); try again shortly`,
  };

  /**
   * Grant waiting requests in arrival order while the head fits. A waiter past its deadline
   * is dropped instead: its own timer ends it, or can no longer fire (its object was reset).
   */
  private pump(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.wait.clock.now() < head.wait.deadline && this.used + head.bytes > this.budgetBytes) return;
      this.queue.shift();
      if (head.wait.clock.now() < head.wait.deadline) head.granted = this.grant(head.bytes, head.wait.owner);
    }
  }
}

type Account = { add(bytes: number): void; remove(r: Reservation, bytes: number): void; room(): number; shortage(): string; reclaim(): void };

class Reservation implements MemoryReservation {
  private done = false;

  constructor(
    private readonly ledger: Account,
    public bytes: number,
    public owner: string | null,
  ) {}

  get released(): boolean {
    return this.done;
  }

  cover(bytes: number): void {
    if (this.done || bytes <= this.bytes) return;
    this.ledger.add(bytes - this.bytes);
    this.bytes = bytes;
  }

  room(): number {
    return this.done ? 0 : this.ledger.room();
  }

  shortage(): string {
    return this.ledger.shortage();
  }

  reclaim(): void {
    if (!this.done) this.ledger.reclaim();
  }

  release(): void {
    if (this.done) return;
    this.done = true;
    this.ledger.remove(this, this.bytes);
  }

  assign(owner: string | null): void {
    this.owner = owner;
  }
}

function mib(bytes: number): string {
  return String(Math.round((bytes / MiB) * 10) / 10);
}
