import { logRecord } from "../observability";
import type { QuickJS } from "quickjs-wasi";
import { GuestVm, type GuestLimits, type Retire, type VmImage } from "./guest-vm";
import type { MemoryLedger, MemoryReservation, RoomWait } from "./memory-ledger";
import { SetupImages, type VmSetup } from "./setup-images";

/** Room for one VM: the clamped limits to create or restore it with (they carry the reservation). */
export type VmRoom =
  | { ok: true; limits: GuestLimits & { reservation: MemoryReservation } }
  | { ok: false; reason: "exhausted"; message: string }
  | { ok: false; reason: "aborted" };

const PROBE_LIMIT_BYTES = 4 << 20;

export type RoomFit = { ok: true } | { ok: false; reason: "exhausted"; message: string } | { ok: false; reason: "aborted" };

/** `installed`: the setup asked for is in the VM already (it was made from that setup's image); otherwise the caller installs it. */
export type VmTake =
  { ok: true; vm: GuestVm; installed: boolean } | { ok: false; reason: "exhausted"; message: string } | { ok: false; reason: "aborted" };

/**
 * `vm` is set once prepared. A spare still being prepared is never awaited by a cell: its
 * promise settles in the I/O context of the request that started the refill, and a cell of
 * another session object must not continue in that context. `used`: the instance of a VM a
 * cell gave back, waiting to be reset (synchronous, so a cell may do it itself). `setup`: what
 * `vm` has installed (null: pristine), or what `used` last ran with.
 */
type Spare = {
  limit: number;
  reservation: MemoryReservation;
  vm: GuestVm | null;
  used: QuickJS | null;
  dropped: boolean;
  setup: VmSetup | null;
};

/** Idle VMs the pool keeps: one being handed out while the one a cell just gave back is reset. */
const MAX_SPARES = 2;

/**
 * The isolate's VMs: every VM a cell runs in comes from here, with its share of the memory
 * ledger reserved first. Keeps warm spare VMs, so an `exec` does not pay for instantiating
 * QuickJS and evaluating the prelude on its critical path. A VM serves exactly one cell
 * (isolation per exec holds); when that cell is done with it and it never faulted, its
 * instance comes back here and is reset to the pristine image in place (GuestVm.reuse: its
 * whole memory overwritten, its JS-side state renewed) to become a spare, which saves
 * instantiating QuickJS and first-touching a new memory. Every VM counts in the ledger at what
 * it holds: a spare at the per-VM overhead, a restored one at its snapshot's memory, then
 * whatever its linear memory grows to (GuestVm grows it only into the isolate's room). Spares
 * are the first thing given up when room is short. Restores take room here too, but never a
 * spare.
 *
 * One pool and one ledger per gateway (createGateway), shared by every session object of
 * the isolate.
 */
export class VmPool {
  private spares: Spare[] = [];
  /**
   * One timer for the work done once the current request has been answered: used spares reset, then
   * a spare prepared if none is left (`refillFor`). One task per cell, not one per kind of work.
   */
  private upkeepTimer: ReturnType<typeof setTimeout> | null = null;
  private refillFor: { memoryLimitBytes: number; setup: VmSetup | null } | null = null;
  readonly images: SetupImages;

  /** A VM was prepared in this isolate: the engine works (set once, never cleared). */
  private started = false;

  constructor(readonly ledger: MemoryLedger) {
    this.images = new SetupImages(ledger);
    ledger.onShortage(() => this.dropIdle());
  }

  /** Where a VM's instance goes when disposed cleanly, with the setup it ran with. */
  private retire(setup: VmSetup | null): Retire {
    return (vm, limit) => this.recycle(vm, limit, setup);
  }

  /** `setup` was installed on `vm` (taken with `installed: false`), before any cell code: its image may be kept. */
  installed(setup: VmSetup, vm: GuestVm): void {
    this.images.installed(setup, vm);
  }

  /**
   * Whether the sandbox can start here at all (seed 004: Tool Search's `"code"` mode falls back to
   * `"tools"` when it cannot). Answered from memory once any VM was prepared; otherwise one VM is
   * prepared and kept as the spare. No room in the ledger is a busy isolate, not a broken engine: true.
   */
  async sandboxStarts(): Promise<boolean> {
    if (this.started || this.spareReady) return true;
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
    return this.spares.some((spare) => spare.vm !== null || spare.used !== null);
  }

  /** Spares held, ready or being prepared or reset. */
  get spareCount(): number {
    return this.spares.length;
  }

  /** Bytes the spares hold in the ledger (0 without one). */
  get spareBytes(): number {
    let bytes = 0;
    for (const spare of this.spares) if (!spare.reservation.released) bytes += spare.reservation.bytes;
    return bytes;
  }

  /** What the pool holds for no cell (spares and kept setup images): reservations and bytes in the ledger. */
  get idle(): { count: number; bytes: number } {
    const images = this.images.size;
    let count = images.images;
    for (const spare of this.spares) if (!spare.reservation.released) count++;
    return { count, bytes: this.spareBytes + images.bytes };
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

  /**
   * A VM for this memory limit with `setup` installed or (`installed: false`) for the caller to
   * install it on: a spare made for that setup, another spare reset to the setup's image (or to
   * the pristine one), or a VM prepared once there is room for it. A VM is only ever handed out
   * for the setup its image has, or pristine.
   */
  async take(memoryLimitBytes: number, wait: RoomWait, setup: VmSetup | null = null): Promise<VmTake> {
    const limit = this.ledger.effectiveLimit(memoryLimitBytes);
    const image = setup ? this.images.get(setup) : undefined;
    // A spare made for this setup first, then any other that can be reset for it.
    const candidates = this.spares.filter((s) => s.limit === limit);
    candidates.sort((a, b) => Number(b.vm !== null && b.setup === setup) - Number(a.vm !== null && a.setup === setup));
    for (const spare of candidates) {
      const vm = this.readyFor(spare, setup, image);
      if (!vm) continue;
      this.spares = this.spares.filter((s) => s !== spare);
      // It holds what it uses, like any VM; it grows from there while the cell runs.
      spare.reservation.assign(wait.owner);
      return { ok: true, vm: vm.retireTo(this.retire(setup)), installed: setup !== null && spare.setup === setup };
    }
    // Another limit, or not ready yet: their room goes back before this VM asks for its own.
    this.dropSpare();
    const room = await this.reserve(memoryLimitBytes, wait);
    if (!room.ok) return room;
    // A VM that cannot be prepared releases its reservation itself.
    const vm = image ? await GuestVm.fromImage(image, room.limits) : await GuestVm.prepare(room.limits);
    this.started = true;
    return { ok: true, vm: vm.retireTo(this.retire(setup)), installed: image !== undefined };
  }

  /**
   * The spare as a VM for `setup`: as it is when made for it (or pristine, and `setup` has no
   * image), else its instance reset to the setup's image or the pristine one. Null when it cannot
   * serve (still being prepared; or reset failed, and it is gone).
   */
  private readyFor(spare: Spare, setup: VmSetup | null, image: VmImage | undefined): GuestVm | null {
    if (spare.vm?.isDisposed) return null;
    if (spare.vm && (spare.setup === setup || (spare.setup === null && !image))) return spare.vm;
    if (spare.vm) {
      // Made for another setup: its instance is reset for this one.
      const made = spare.vm;
      spare.used = made.surrender();
      spare.vm = null;
      if (!spare.used) {
        this.spares = this.spares.filter((s) => s !== spare);
        made.retireTo(null).dispose();
        return null;
      }
    }
    if (!spare.used) return null;
    spare.setup = setup;
    return this.reset(spare, image);
  }

  /**
   * A spare's instance for a restore of `bytes` of memory (GuestVm.restore resets it to the
   * snapshot instead of instantiating QuickJS): one not larger than the snapshot, so the restored
   * VM holds exactly what a fresh restore would. The spare is gone and its room given back (the
   * restore has its own). Null without one.
   */
  instanceFor(bytes: number): QuickJS | null {
    const size = (s: Spare) => (s.used ? s.used._getMemory().buffer.byteLength : s.vm && !s.vm.isDisposed ? s.vm.memoryBytes : Infinity);
    // A used instance first: it was not reset yet, so nothing is wasted on it.
    const ranked = this.spares.filter((s) => size(s) <= bytes);
    ranked.sort((a, b) => Number(b.used !== null) - Number(a.used !== null));
    for (const spare of ranked) {
      const instance = spare.used ?? spare.vm!.surrender();
      if (!instance) continue;
      this.spares = this.spares.filter((s) => s !== spare);
      spare.used = null;
      spare.vm = null;
      spare.reservation.release();
      return instance;
    }
    return null;
  }

  /** A VM restored in room from `reserve`: like a taken one, its instance comes back here when disposed cleanly. */
  keep(vm: GuestVm): GuestVm {
    return vm.retireTo(this.retire(null));
  }

  /**
   * Prepare a spare once the current request has been answered, if there is none, there is room
   * for it and nobody is waiting: a spare never makes a cell wait. Made from `setup`'s image when
   * one is kept (the next cell of the turn likely has the same setup).
   */
  refillSoon(memoryLimitBytes: number, setup: VmSetup | null = null): void {
    if (this.spares.length > 0 || this.refillFor) return;
    this.refillFor = { memoryLimitBytes, setup };
    this.upkeepSoon();
  }

  /** The pool's upkeep, after the current request: used spares reset first, then a refill if one was asked for and none is left. */
  private upkeepSoon(): void {
    this.upkeepTimer ??= setTimeout(() => {
      this.upkeepTimer = null;
      for (const spare of [...this.spares]) if (spare.used) spare.vm = this.reset(spare, spare.setup ? this.images.get(spare.setup) : undefined);
      const refill = this.refillFor;
      this.refillFor = null;
      if (refill && this.spares.length === 0) this.refill(refill.memoryLimitBytes, refill.setup);
    }, 0);
  }

  /** A spare prepared now (its instantiation runs on), from `setup`'s image when one is kept. */
  private refill(memoryLimitBytes: number, setup: VmSetup | null): void {
    const image = setup ? this.images.get(setup) : undefined;
    // A spare holds what a fresh VM occupies, so keeping one warm never makes a resume give it up.
    const reservation = this.ledger.tryReserve(Math.max(this.ledger.overheadBytes, image?.snapshot.memory.byteLength ?? 0));
    if (!reservation) return;
    const limits = { memoryLimitBytes: this.ledger.effectiveLimit(memoryLimitBytes), reservation };
    const spare: Spare = { limit: limits.memoryLimitBytes, reservation, vm: null, used: null, dropped: false, setup: image ? setup : null };
    this.spares.push(spare);
    // A failed prepare releases the reservation itself; the next refill tries again.
    (image ? GuestVm.fromImage(image, limits) : GuestVm.prepare(limits)).then(
      (vm) => {
        this.started = true;
        if (spare.dropped) vm.dispose();
        else spare.vm = vm.retireTo(this.retire(spare.setup));
      },
      (error: unknown) => {
        logRecord("host_error", { where: "vm_pool.refill", error });
        this.spares = this.spares.filter((s) => s !== spare);
      },
    );
  }

  /**
   * A cell is done with a VM that never faulted: keep its instance as a spare, reset once the
   * current request has been answered (or by the next cell that takes it first). Dropped when
   * the pool holds enough spares, the isolate has no room for one, or it grew past every image
   * it could be reset to (the image of the setup it ran with, or the pristine one).
   */
  private recycle(vm: QuickJS, limit: number, setup: VmSetup | null): void {
    const bytes = vm._getMemory().buffer.byteLength;
    const image = setup ? this.images.get(setup) : undefined;
    const fits = bytes <= Math.max(this.ledger.overheadBytes, image ? image.snapshot.memory.byteLength : 0);
    const reservation = fits && this.spares.length < MAX_SPARES ? this.ledger.tryReserve(Math.max(bytes, this.ledger.overheadBytes)) : null;
    if (!reservation) return dropInstance(vm);
    this.spares.push({ limit, reservation, vm: null, used: vm, dropped: false, setup });
    this.upkeepSoon();
  }

  /**
   * A used instance reset to `image` (its setup's, with `spare.setup` kept) or, without one, to
   * the pristine image (`spare.setup` null); or null, its instance dropped and its room given back.
   */
  private reset(spare: Spare, image: VmImage | undefined): GuestVm | null {
    const used = spare.used;
    spare.used = null;
    if (!used) return spare.vm;
    if (!image) spare.setup = null;
    try {
      const vm = GuestVm.reuse(used, { memoryLimitBytes: spare.limit, reservation: spare.reservation }, image);
      if (vm) return vm.retireTo(this.retire(spare.setup));
      dropInstance(used);
      spare.reservation.release();
    } catch (error) {
      // GuestVm.reuse disposed the instance and released the room itself.
      logRecord("host_error", { where: "vm_pool.reset", error });
    }
    this.spares = this.spares.filter((s) => s !== spare);
    return null;
  }

  /** Give up everything held for no cell: the spares and the kept setup images (what a shortage of room takes). */
  dropIdle(): void {
    this.dropSpare();
    this.images.drop();
  }

  /** Dispose the spares now, or (still being prepared) as soon as they are ready. */
  dropSpare(): void {
    const spares = this.spares;
    this.spares = [];
    for (const spare of spares) {
      spare.dropped = true;
      // Given up for good, not back into the pool.
      if (spare.vm) spare.vm.retireTo(null).dispose();
      if (spare.used) dropInstance(spare.used);
      spare.used = null;
      // Not ready: its room goes back now (a preparing VM holds ~1.3 MB, not its limit), so a
      // prepare that never finishes cannot keep it.
      if (!spare.vm) spare.reservation.release();
    }
  }
}

function dropInstance(vm: QuickJS): void {
  try {
    vm.dispose();
  } catch (error) {
    logRecord("host_error", { where: "vm_pool.drop", error });
  }
}

/** What a session object hands its cells: the isolate's pool, and itself as the owner of their VMs. */
export type CellVms = { pool: VmPool; owner: string };
