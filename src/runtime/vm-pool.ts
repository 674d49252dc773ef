import { logRecord } from "../observability";
import { GuestVm, type GuestLimits } from "./guest-vm";
import type { MemoryLedger, MemoryReservation, RoomWait } from "./memory-ledger";

/** Room for one VM: the clamped limits to create or restore it with (they carry the reservation). */
export type VmRoom =
  | { ok: true; limits: GuestLimits & { reservation: MemoryReservation } }
  | { ok: false; reason: "exhausted"; message: string }
  | { ok: false; reason: "aborted" };

const PROBE_LIMIT_BYTES = 4 << 20;

export type RoomFit = { ok: true } | { ok: false; reason: "exhausted"; message: string } | { ok: false; reason: "aborted" };

export type VmTake = { ok: true; vm: GuestVm } | { ok: false; reason: "exhausted"; message: string } | { ok: false; reason: "aborted" };

/**
 * `vm` is set once prepared. A spare still being prepared is never awaited by a cell: its
 * promise settles in the I/O context of the request that started the refill, and a cell of
 * another session object must not continue in that context.
 */
type Spare = { limit: number; reservation: MemoryReservation; vm: GuestVm | null; dropped: boolean };

/**
 * The isolate's VMs: every VM a cell runs in comes from here, with its share of the memory
 * ledger reserved first. Keeps one warm spare VM, so an `exec` does not pay for
 * instantiating QuickJS and evaluating the prelude on its critical path. A spare is never
 * reused: it is handed to exactly one cell (isolation per exec holds), and the next spare is
 * made after that cell's answer is out. Every VM counts in the ledger at what it holds: a
 * fresh VM (the spare too) at the per-VM overhead, a restored one at its snapshot's memory,
 * then whatever its linear memory grows to (GuestVm grows it only into the isolate's room).
 * The spare is the first thing given up when room is short. Restores take room here too,
 * but never the spare.
 *
 * One pool and one ledger per gateway (createGateway), shared by every session object of
 * the isolate.
 */
export class VmPool {
  private spare: Spare | null = null;
  private refillTimer: ReturnType<typeof setTimeout> | null = null;

  /** A VM was prepared in this isolate: the engine works (set once, never cleared). */
  private started = false;

  constructor(readonly ledger: MemoryLedger) {
    ledger.onShortage(() => this.dropSpare());
  }

  /**
   * Whether the sandbox can start here at all (seed 004: Tool Search's `"code"` mode falls back to
   * `"tools"` when it cannot). Answered from memory once any VM was prepared; otherwise one VM is
   * prepared and kept as the spare. No room in the ledger is a busy isolate, not a broken engine: true.
   */
  async sandboxStarts(): Promise<boolean> {
    if (this.started || this.spare?.vm) return true;
    const reservation = this.ledger.tryReserve(this.ledger.overheadBytes);
    if (!reservation) return true;
    try {
      // The reservation is what a fresh VM occupies; the probe never runs a program.
      const vm = await GuestVm.prepare({ memoryLimitBytes: this.ledger.effectiveLimit(PROBE_LIMIT_BYTES), reservation });
      this.started = true;
      vm.dispose();
      return true;
    } catch (error) {
      logRecord("host_error", { where: "vm_pool.probe", error });
      return false;
    }
  }

  /** A prepared spare is waiting for the next exec. */
  get spareReady(): boolean {
    return this.spare?.vm != null;
  }

  /** Bytes the spare holds in the ledger (0 without one). */
  get spareBytes(): number {
    return this.spare && !this.spare.reservation.released ? this.spare.reservation.bytes : 0;
  }

  /**
   * Room for a VM with this memory limit (clamped to the budget), waiting within `wait`: what
   * a fresh VM holds. A restore raises it to its snapshot's memory (`fit`) once decoded. The
   * caller hands `limits` to `GuestVm.restore`, which then owns the reservation.
   */
  async reserve(memoryLimitBytes: number, wait: RoomWait): Promise<VmRoom> {
    const outcome = await this.ledger.reserve(this.ledger.overheadBytes, wait);
    if (!outcome.ok) return outcome;
    return { ok: true, limits: { memoryLimitBytes: this.ledger.effectiveLimit(memoryLimitBytes), reservation: outcome.reservation } };
  }

  /**
   * Raise reserved room to what a snapshot of `memoryBytes` will hold once restored, waiting
   * within `wait`. On failure the room keeps what it had (its holder still releases it).
   */
  async fit(room: GuestLimits & { reservation: MemoryReservation }, memoryBytes: number, wait: RoomWait): Promise<RoomFit> {
    const outcome = await this.ledger.raise(room.reservation, memoryBytes, wait);
    return outcome.ok ? { ok: true } : outcome;
  }

  /** The spare for this memory limit, or a freshly prepared VM once there is room for it. */
  async take(memoryLimitBytes: number, wait: RoomWait): Promise<VmTake> {
    const spare = this.spare;
    if (spare?.vm && !spare.vm.isDisposed && spare.limit === this.ledger.effectiveLimit(memoryLimitBytes)) {
      this.spare = null;
      // It holds what it uses, like any VM; it grows from there while the cell runs.
      spare.reservation.assign(wait.owner);
      return { ok: true, vm: spare.vm };
    }
    // Another limit, or not ready yet: its room goes back before this VM asks for its own.
    this.dropSpare();
    const room = await this.reserve(memoryLimitBytes, wait);
    if (!room.ok) return room;
    // A VM that cannot be prepared releases its reservation itself.
    const vm = await GuestVm.prepare(room.limits);
    this.started = true;
    return { ok: true, vm };
  }

  /**
   * Prepare the next spare once the current request has been answered, if there is room for
   * it and nobody is waiting: a spare never makes a cell wait.
   */
  refillSoon(memoryLimitBytes: number): void {
    if (this.spare || this.refillTimer) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = null;
      if (this.spare) return;
      // A spare holds what a fresh VM occupies, so keeping one warm never makes a resume give it up.
      const reservation = this.ledger.tryReserve(this.ledger.overheadBytes);
      if (!reservation) return;
      const limits = { memoryLimitBytes: this.ledger.effectiveLimit(memoryLimitBytes), reservation };
      const spare: Spare = { limit: limits.memoryLimitBytes, reservation, vm: null, dropped: false };
      this.spare = spare;
      // A failed prepare releases the reservation itself; the next refill tries again.
      GuestVm.prepare(limits).then(
        (vm) => {
          this.started = true;
          if (spare.dropped) vm.dispose();
          else spare.vm = vm;
        },
        (error: unknown) => {
          logRecord("host_error", { where: "vm_pool.refill", error });
          if (this.spare === spare) this.spare = null;
        },
      );
    }, 0);
  }

  /** Dispose the spare now, or (still being prepared) as soon as it is ready. */
  dropSpare(): void {
    const spare = this.spare;
    this.spare = null;
    if (!spare) return;
    spare.dropped = true;
    if (spare.vm) spare.vm.dispose();
    // Not ready: its room goes back now (a preparing VM holds ~1.3 MB, not its limit), so a
    // prepare that never finishes cannot keep it.
    else spare.reservation.release();
  }
}

/** What a session object hands its cells: the isolate's pool, and itself as the owner of their VMs. */
export type CellVms = { pool: VmPool; owner: string };
