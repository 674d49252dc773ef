import { JSException, QuickJS, type JSValueHandle, type Snapshot } from "quickjs-wasi";
import { QUICKJS_MODULE } from "../../wasm/quickjs";
import { logRecord } from "../observability";
import { GUEST_ABI_VERSION, GUEST_CONTROL, HOST_CALL, HOST_OP } from "./guest-prelude";
import { classify, GuestFaultError, type GuestFault } from "./guest-fault";
import { frozenWasi, preludePrograms, type PreludePrograms } from "./prelude-bytecode";
import type { InterruptGuard } from "./interrupt-guard";
import type { MemoryReservation } from "./memory-ledger";
import { GUEST_MAX_STACK_BYTES } from "../limits";
import { resetToImage, restoreImage } from "./image-restore";

/** What the guest asks of the host. Callbacks run synchronously inside a guest call. */
export interface GuestHost {
  /** Record a bridge request; throw a string to reject it in the guest at once. */
  request(id: number, op: string, payloadText: string): void;
  output(kind: "text" | "json", text: string): void;
  cancel(id: number): void;
  /** The guest read network-written metadata from its own memory (ABI 4); `source` names it. */
  taint?(source: string): void;
}

/**
 * `reservation`: the VM's share of the isolate's memory ledger. The VM takes it over: it is
 * released when the VM is disposed or when creating/restoring the VM fails, and raised to
 * the VM's linear memory as it grows; the VM may only allocate into the isolate's room (see
 * `fitLimit`). Absent for VMs outside the ledger (the pristine image, benchmarks, unit
 * tests): those get `memoryLimitBytes` alone.
 */
export type GuestLimits = { memoryLimitBytes: number; reservation?: MemoryReservation };

export type CellStatus = {
  state: "idle" | "running" | "completed" | "failed" | "unserializable";
  syntax: boolean;
  hasValue: boolean;
  /** An uncaught timer error or unhandled rejection is on record. */
  failure: boolean;
  pending: number;
};

/**
 * Guest ABI versions (see GUEST_ABI_VERSION) this host can drive in a restored VM. When the
 * ABI changes, keep the older version here, with whatever the host needs to drive it, for at
 * least the maximum snapshot TTL after the deploy that changed it. Listed explicitly (a test
 * checks it includes GUEST_ABI_VERSION), so a bump never drops an older version by accident.
 */
export const DRIVABLE_GUEST_ABI: readonly number[] = [1, 2, 3, 4, 5, 6, 7];

/**
 * A VM prepared exactly like a cell's (prelude, host callback, control object hidden) with a
 * frozen clock and zero randomness, snapshotted: the same bytes in every isolate of a build.
 * Every cell VM is restored from it (a copy of its memory instead of instantiating QuickJS and
 * evaluating the prelude), and parked snapshots are stored as their difference from it.
 */
export type PristineVm = { snapshot: Snapshot; controlToken: number };

/** A VM's state as others are made from: the pristine image, or one with a setup installed (see VmPool). */
export type VmImage = PristineVm;

/** The image's memory limit; a VM restored from it applies its own (a few runtime fields). */
export const PRISTINE_MEMORY_LIMIT_BYTES = 67108864;

let pristine: Promise<PristineVm> | undefined;
/** The image once built (a VM can only be reset to it after one was prepared from it). */
let pristineBuilt: PristineVm | undefined;

/** The isolate's pristine VM image (built once, on first use). */
export function pristineVm(): Promise<PristineVm> {
  pristine ??= buildPristineVm().then(
    (image) => (pristineBuilt = image),
    (error) => {
      pristine = undefined;
      throw error;
    },
  );
  return pristine;
}

/** Where a cleanly disposed VM's instance goes to be reset and reused (see VmPool). */
export type Retire = (vm: QuickJS, memoryLimitBytes: number) => void;

/** Build the image without the per-isolate cache (tests prove it is the same every time). */
export async function buildPristineVm(): Promise<PristineVm> {
  const vm = await GuestVm.prepare({ memoryLimitBytes: PRISTINE_MEMORY_LIMIT_BYTES }, true);
  try {
    const snapshot = vm.snapshot();
    return { snapshot: { ...snapshot, memory: snapshot.memory.slice() }, controlToken: vm.controlToken };
  } finally {
    vm.dispose();
  }
}

/** Seed words drawn from the CSPRNG 4 KiB at a time: one call per 256 VMs, each word used once. */
let seedWords = new Uint32Array(0);
let seedAt = 0;

/** 128 bits for the guest's Math.random (see GUEST_RANDOM_SOURCE in guest-prelude.ts). */
function randomSeed(): [number, number, number, number] {
  if (seedAt + 4 > seedWords.length) {
    seedWords = crypto.getRandomValues(new Uint32Array(1024));
    seedAt = 0;
  }
  const seed: [number, number, number, number] = [seedWords[seedAt]!, seedWords[seedAt + 1]!, seedWords[seedAt + 2]!, seedWords[seedAt + 3]!];
  seedWords.fill(0, seedAt, seedAt + 4);
  seedAt += 4;
  return seed;
}

/**
 * The guest generator's state after `GUEST_CONTROL.seed(a, b, c, d)` (GUEST_RANDOM_SOURCE in
 * guest-prelude.ts): the same Int32 arithmetic, so the host can write it into a VM's memory
 * instead of calling into the guest.
 */
export function guestSeedState(words: readonly [number, number, number, number]): Int32Array {
  const rs = Int32Array.from(words);
  if ((rs[0]! | rs[1]! | rs[2]! | rs[3]!) === 0) rs[3] = 1;
  for (let i = 0; i < 8; i++) {
    const t = rs[1]! << 9;
    rs[2]! ^= rs[0]!;
    rs[3]! ^= rs[1]!;
    rs[1]! ^= rs[2]!;
    rs[0]! ^= rs[3]!;
    rs[2]! ^= t;
    rs[3] = (rs[3]! << 11) | (rs[3]! >>> 21);
  }
  return rs;
}

/**
 * Where the generator's 16 bytes of state (the prelude's Int32Array) sit in every VM of the
 * pristine image, found on the first seeding (undefined: not looked for yet; null: not found,
 * so every VM is seeded through the guest). VMs restored or reset from the image share its
 * layout, and QuickJS never moves an allocation.
 */
let seedOffset: number | null | undefined;

/** The only offset where `memory` holds `state` and the image holds zeros (the unseeded generator), or null. */
function findSeedState(memory: Uint8Array, image: Uint8Array, state: Int32Array): number | null {
  const want = new Uint8Array(state.buffer, state.byteOffset, 16);
  const words = new Uint32Array(memory.buffer, memory.byteOffset, memory.byteLength >> 2);
  const first = new DataView(want.buffer, want.byteOffset).getUint32(0, true);
  let found: number | null = null;
  for (let w = 0; w + 4 <= words.length && (w << 2) + 16 <= image.byteLength; w++) {
    if (words[w] !== first) continue;
    const at = w << 2;
    let same = true;
    for (let i = 0; i < 16 && same; i++) same = memory[at + i] === want[i] && image[at + i] === 0;
    if (!same) continue;
    if (found !== null) return null;
    found = at;
  }
  return found;
}

/**
 * Owner of one QuickJS-WASI instance (one per exec and per resume). Every call into the
 * guest goes through here; engine-level failures (interrupt, out of memory, a wasm trap)
 * become a `GuestFaultError` and poison the VM, which is then only good for `dispose()`.
 */
export class GuestVm {
  private disposed = false;
  private faulted: GuestFault | null = null;
  private rejections: Array<{ promise: JSValueHandle; reason?: JSValueHandle; handled: boolean }> = [];
  /** The cell this VM serves; a pooled VM is created unbound and bound when handed out. */
  private guard: InterruptGuard | null = null;
  private host: GuestHost | null = null;
  /** The guest control object; never reachable from guest globals. */
  private ctl!: JSValueHandle;
  /** `exportHandle` token of the control object, valid in this VM and its restored snapshots. */
  controlToken = 0;
  /** Linear memory when the allocation limit was last fitted to the isolate's room. */
  private fittedLinear = -1;
  /** The allocation limit last set is the isolate's room, not `cap` (an out-of-memory is the isolate's). */
  private roomBound = false;
  /** Takes the instance on a clean dispose instead of dropping it (set by the pool that handed the VM out). */
  private retire: Retire | null = null;
  /** Guest calls on the stack (a VM disposed from inside one is never reused). */
  private depth = 0;

  /** `abi`: the guest ABI of the prelude in this VM's memory (a restored VM keeps its parker's). */
  private constructor(
    private vm: QuickJS,
    readonly abi: number,
    private readonly reservation: MemoryReservation | undefined,
    /** The VM's own memory cap (`memoryLimitBytes`): the room never raises it past this. */
    private readonly cap: number,
  ) {}

  private static options(limits: GuestLimits, guest: () => GuestVm | undefined, deterministic = false) {
    return {
      wasm: QUICKJS_MODULE,
      ...(deterministic ? { wasi: frozenWasi } : {}),
      memoryLimit: limits.memoryLimitBytes,
      maxStackSize: GUEST_MAX_STACK_BYTES,
      // Unbound (pooled, running only the trusted prelude) means no budget yet.
      interruptHandler: () => {
        const g = guest();
        if (!g) return false;
        g.refitOnGrowth();
        return g.guard?.handler() ?? false;
      },
      timezoneOffset: 0,
      onUnhandledRejection: (promise: JSValueHandle, reason: JSValueHandle, isHandled: boolean) =>
        guest()?.recordRejection(promise, reason, isHandled),
    };
  }

  /**
   * A fresh VM with the prelude installed, not yet bound to a cell (see VmPool): restored from
   * the pristine image, then given its own Math.random seed. `deterministic` (frozen clock, zero
   * randomness) instead instantiates QuickJS and evaluates the prelude: that builds the image;
   * cells never run in such a VM.
   */
  static async prepare(limits: GuestLimits, deterministic = false): Promise<GuestVm> {
    if (deterministic) return GuestVm.build(limits, true);
    let image: PristineVm;
    try {
      image = await pristineVm();
    } catch (error) {
      limits.reservation?.release();
      throw error;
    }
    return GuestVm.seeded(await GuestVm.restoreVm(image.snapshot, image.controlToken, limits, GUEST_ABI_VERSION, true));
  }

  /**
   * `prepare`'s VM from a used instance (see `resetToImage`), without instantiating QuickJS:
   * the pristine image copied over its memory, then its own seed. Null when the instance
   * cannot be reset; the caller disposes it and releases `limits.reservation`.
   */
  static reuse(vm: QuickJS, limits: GuestLimits, image: VmImage | undefined = pristineBuilt): GuestVm | null {
    let guest: GuestVm | undefined;
    let reset = false;
    try {
      reset =
        image !== undefined &&
        resetToImage(
          vm,
          image.snapshot,
          GuestVm.options(limits, () => guest),
          true,
        );
    } catch (error) {
      // Half written (a grow refused, say): never handed out; the caller drops it and frees its room, as for a refusal.
      logRecord("host_error", { where: "vm.reuse", error });
    }
    if (!reset || !image) return null;
    guest = GuestVm.adopt(vm, image.controlToken, limits, GUEST_ABI_VERSION);
    return GuestVm.seeded(guest);
  }

  /** `prepare` from another image derived from the pristine one (a setup installed; see VmPool): restored, then its own seed. */
  static async fromImage(image: VmImage, limits: GuestLimits): Promise<GuestVm> {
    return GuestVm.seeded(await GuestVm.restoreVm(image.snapshot, image.controlToken, limits, GUEST_ABI_VERSION, true));
  }

  /**
   * This VM as an image other VMs are made from: taken right after a setup was installed, before
   * any cell code ran (the caller's word; see VmPool). Each copy gets its own seed.
   */
  image(): VmImage {
    return { snapshot: this.snapshot(), controlToken: this.controlToken };
  }

  /** Bytes of linear memory this VM holds (it never shrinks). */
  get memoryBytes(): number {
    return this.linearBytes();
  }

  /**
   * An unbound VM's instance, given back to its pool to be reset to another image (GuestVm.reuse);
   * this wrapper is disposed, and its reservation passes to whoever resets the instance. Null (and
   * nothing changed) when it is bound to a cell, faulted, inside a guest call or disposed.
   */
  surrender(): QuickJS | null {
    if (this.disposed || this.faulted || this.depth !== 0 || this.guard || this.host || this.rejections.length > 0) return null;
    this.disposed = true;
    const vm = this.vm;
    this.vm = undefined as unknown as QuickJS;
    this.ctl = undefined as unknown as JSValueHandle;
    return vm;
  }

  /**
   * Before any cell code: every copy of the image starts from the same generator state otherwise.
   * Written straight into the generator's state once its place is known (a guest call costs about
   * as much as the whole reset of a reused VM); the first VM is seeded through the guest and shows
   * where that state lives.
   */
  private static seeded(vm: GuestVm): GuestVm {
    try {
      const words = randomSeed();
      if (typeof seedOffset === "number") {
        const state = guestSeedState(words);
        const view = new DataView(vm.vm._getMemory().buffer);
        for (let i = 0; i < 4; i++) view.setInt32(seedOffset + 4 * i, state[i]!, true);
      } else {
        vm.control("seed", ...words).dispose();
        if (seedOffset === undefined && pristineBuilt) {
          seedOffset = findSeedState(new Uint8Array(vm.vm._getMemory().buffer), pristineBuilt.snapshot.memory, guestSeedState(words));
        }
      }
    } catch (error) {
      vm.dispose();
      throw error;
    }
    return vm;
  }

  /** Where seeding writes the generator's state (see `seeded`); null or undefined: through the guest. For tests. */
  static get seedStateOffset(): number | null | undefined {
    return seedOffset;
  }

  private static async build(limits: GuestLimits, deterministic: boolean): Promise<GuestVm> {
    // Compiled once per isolate in a throwaway VM, so every isolate gets the same bytes and
    // cell VMs share their layout with the pristine image.
    let guest: GuestVm | undefined;
    let programs: PreludePrograms;
    let vm: QuickJS;
    try {
      programs = await preludePrograms();
      vm = await QuickJS.create(GuestVm.options(limits, () => guest, deterministic));
    } catch (error) {
      limits.reservation?.release();
      throw error;
    }
    guest = new GuestVm(vm, GUEST_ABI_VERSION, limits.reservation, limits.memoryLimitBytes);
    try {
      guest.registerHost(true);
      // Parsed once per isolate: evaluating bytecode skips most of the prelude's cost.
      guest.guarded(() => {
        vm.evalBytecode(programs.prelude).dispose();
        guest.ctl = vm.global.getProp(GUEST_CONTROL);
        guest.controlToken = vm.exportHandle(guest.ctl);
        vm.evalBytecode(programs.hideControl).dispose();
        // Built once per isolate, then copied into every cell VM: leave the prelude's garbage out of
        // it, and set the next collection where QuickJS would after one, so a cell's first
        // allocations do not start with a full collection of the prelude's heap.
        const gc = vm._getExports();
        gc.qjs_run_gc();
        const allocated = gc.qjs_get_allocated_size();
        gc.qjs_set_gc_threshold(Math.max(gc.qjs_get_gc_threshold(), allocated + (allocated >> 1)));
      });
    } catch (error) {
      guest.dispose();
      throw error;
    }
    return guest;
  }

  /** Bytes the engine has allocated (a lower bound of the snapshot size; constant time). */
  allocatedBytes(): number {
    return this.guarded(() => this.vm.getAllocatedSize());
  }

  /** The VM's whole memory image (for the pristine image; cells snapshot through `snapshot()`). */
  memoryImage(): Uint8Array {
    return this.guarded(() => this.vm.snapshot().memory.slice());
  }

  static async create(limits: GuestLimits, guard: InterruptGuard, host: GuestHost): Promise<GuestVm> {
    return (await GuestVm.prepare(limits)).bind(guard, host);
  }

  /**
   * A VM from a snapshot; `abi` is the guest ABI it was parked with (its header says), which
   * must be one of DRIVABLE_GUEST_ABI.
   */
  static async restore(
    snapshot: Snapshot,
    controlToken: number,
    limits: GuestLimits,
    guard: InterruptGuard,
    host: GuestHost,
    abi: number,
    /** A used instance to reset to the snapshot instead of instantiating QuickJS (VmPool.instanceFor); disposed if it cannot be. */
    instance: QuickJS | null = null,
  ): Promise<GuestVm> {
    if (!DRIVABLE_GUEST_ABI.includes(abi)) {
      if (instance) dropQuietly(instance);
      throw new Error(`guest ABI version ${abi} cannot be driven by this build`);
    }
    if (instance) {
      let guest: GuestVm | undefined;
      let reset = false;
      try {
        reset = resetToImage(
          instance,
          snapshot,
          GuestVm.options(limits, () => guest),
        );
      } catch (error) {
        logRecord("host_error", { where: "vm.restore_into", error });
      }
      if (reset) {
        guest = GuestVm.adopt(instance, controlToken, limits, abi);
        return guest.bind(guard, host);
      }
      dropQuietly(instance);
    }
    return (await GuestVm.restoreVm(snapshot, controlToken, limits, abi)).bind(guard, host);
  }

  /**
   * A VM from a snapshot, not yet bound; `limits.reservation` is released if it cannot be made.
   * `pristine`: the snapshot is the isolate's image, restored by copying only what differs from a
   * fresh instance (see image-restore.ts; its page list is computed once per image).
   */
  private static async restoreVm(snapshot: Snapshot, controlToken: number, limits: GuestLimits, abi: number, pristine = false): Promise<GuestVm> {
    let guest: GuestVm | undefined;
    let vm: QuickJS;
    try {
      const options = GuestVm.options(limits, () => guest);
      vm = await (pristine ? restoreImage(snapshot, options) : QuickJS.restore(snapshot, options));
    } catch (error) {
      limits.reservation?.release();
      throw error;
    }
    guest = GuestVm.adopt(vm, controlToken, limits, abi);
    return guest;
  }

  /** Wrap a restored (or reset) instance: its host callback re-registered, its control object found. */
  private static adopt(vm: QuickJS, controlToken: number, limits: GuestLimits, abi: number): GuestVm {
    const guest = new GuestVm(vm, abi, limits.reservation, limits.memoryLimitBytes);
    guest.coverLinearMemory();
    try {
      guest.registerHost(false);
      guest.ctl = vm.importHandle(controlToken);
      guest.controlToken = controlToken;
      if (!guest.ctl.isObject) throw new Error("control object missing");
    } catch (error) {
      guest.dispose();
      throw error;
    }
    return guest;
  }

  /** On a clean dispose, hand the instance to `retire` (the pool) instead of dropping it. */
  retireTo(retire: Retire | null): this {
    this.retire = retire;
    return this;
  }

  /** Attach the cell's interrupt budget and bridge; a VM serves exactly one cell. */
  bind(guard: InterruptGuard, host: GuestHost): this {
    if (this.guard || this.host) throw new Error("GuestVm is already bound to a cell");
    this.guard = guard;
    this.host = host;
    return this;
  }

  /** Host callbacks by stable name; they throw strings only, so no host stack reaches the guest. */
  private registerHost(fresh: boolean): void {
    const str = (h: JSValueHandle | undefined): string => (h !== undefined && h.isString ? h.toString() : "");
    const num = (h: JSValueHandle | undefined): number => (h !== undefined && h.isNumber ? h.toNumber() : NaN);
    const dispatch = (...args: JSValueHandle[]): JSValueHandle => {
      const host = this.host;
      if (!host) throw "the code mode bridge is not connected";
      // Out of budget: refuse before copying anything (the engine may not check its
      // interrupt handler again for thousands of cheap guest steps).
      if (this.guard?.reason) throw "code mode cell exceeded its execution budget";
      try {
        switch (num(args[0])) {
          case HOST_OP.request: {
            const text = str(args[3]);
            this.guard?.charge(text.length);
            host.request(num(args[1]), str(args[2]), text);
            break;
          }
          case HOST_OP.output: {
            const text = str(args[2]);
            this.guard?.charge(text.length);
            host.output(str(args[1]) === "json" ? "json" : "text", text);
            break;
          }
          case HOST_OP.cancel:
            host.cancel(num(args[1]));
            break;
          case HOST_OP.charge:
            // Native work about to run for the guest (see work-meter.ts): refused when unpaid.
            this.guard?.chargeWork(num(args[1]));
            if (this.guard?.reason) throw "code mode cell exceeded its execution budget";
            break;
          case HOST_OP.taint:
            host.taint?.(str(args[1]).slice(0, 200));
            break;
          default:
            throw "unknown host operation";
        }
      } catch (error) {
        throw typeof error === "string" ? error : "bridge request failed";
      }
      return this.vm.undefined;
    };
    if (fresh) {
      const handle = this.vm.newFunction(HOST_CALL, dispatch);
      this.vm.setProp(this.vm.global, HOST_CALL, handle);
      handle.dispose();
    } else {
      this.vm.registerHostCallback(HOST_CALL, dispatch);
    }
  }

  private recordRejection(promise: JSValueHandle, reason: JSValueHandle, isHandled: boolean): void {
    // Called from inside the engine: only keep references; the guest is told afterwards.
    this.rejections.push(isHandled ? { promise: promise.dup(), handled: true } : { promise: promise.dup(), reason: reason.dup(), handled: false });
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  get fault(): GuestFault | null {
    return this.faulted;
  }

  /** Run `fn` against the engine, turning engine-level failures into a GuestFaultError. */
  private guarded<T>(fn: () => T): T {
    if (this.disposed) throw new GuestFaultError({ kind: "crashed", detail: "the VM was disposed" });
    if (this.faulted) throw new GuestFaultError(this.faulted);
    this.depth++;
    try {
      this.fitLimit();
      return fn();
    } catch (error) {
      const fault = classify(error, this.guard);
      // Refused by the isolate's room, not by the VM's own cap: say so.
      this.faulted =
        fault.kind === "out_of_memory" && this.roomBound && this.reservation
          ? { kind: "out_of_memory", isolate: this.reservation.shortage() }
          : fault;
      if (error instanceof JSException) error.dispose();
      throw new GuestFaultError(this.faulted);
    } finally {
      this.depth--;
      this.coverLinearMemory();
    }
  }

  /** This VM's linear memory in bytes (quickjs-wasi's own `WebAssembly.Memory`, pinned version). */
  private linearBytes(): number {
    return this.vm._getMemory().buffer.byteLength;
  }

  /**
   * Linear memory never shrinks and can outgrow `memoryLimit` (fragmentation): keep the
   * ledger's reservation at least as large as what this VM really holds.
   */
  private coverLinearMemory(): void {
    if (!this.reservation || this.disposed) return;
    this.reservation.cover(this.linearBytes());
  }

  /**
   * Let the engine allocate only into what this VM may still grow by: the slack of its own
   * reservation plus the isolate's room, never past its cap. Set before every guest call and
   * again whenever the interrupt handler sees linear memory grown, since only one VM of the
   * isolate runs at a time (guest calls are synchronous), the running VM may take the whole
   * room. quickjs-wasi has no hook on `memory.grow`, so this bounds the bytes QuickJS
   * allocates, not linear memory itself: free blocks it cannot reuse (fragmentation) and the
   * allocator's growth step can take linear memory past the room until the next refit, which
   * covers it (the ledger may then exceed its budget, and new VMs wait until it is released).
   */
  private fitLimit(): void {
    const r = this.reservation;
    if (!r || r.released) return;
    const held = this.linearBytes();
    r.cover(held);
    this.fittedLinear = held;
    const allocated = this.vm.getAllocatedSize();
    let limit = Math.min(this.cap, allocated + (r.bytes - held) + r.room());
    if (limit < this.cap && this.guard) {
      // A cell's VM short of room: the pool's spare is given up first (never for the spare itself, unbound).
      r.reclaim();
      limit = Math.min(this.cap, allocated + (r.bytes - held) + r.room());
    }
    this.roomBound = limit < this.cap;
    // 0 would mean "no limit" to QuickJS: at least 1 byte (every allocation refused).
    this.vm._getExports().qjs_set_memory_limit(Math.max(1, limit));
  }

  /** From the interrupt handler: linear memory grew since the last fit, so the room shrank. */
  private refitOnGrowth(): void {
    if (this.reservation && !this.disposed && this.linearBytes() !== this.fittedLinear) this.fitLimit();
  }

  private control(method: string, ...args: Array<string | number | boolean | undefined>): JSValueHandle {
    return this.guarded(() => {
      const vm = this.vm;
      const fn = this.ctl.getProp(method);
      const handles = args.map((a) =>
        a === undefined ? vm.undefined : typeof a === "string" ? vm.newString(a) : typeof a === "number" ? vm.newNumber(a) : a ? vm.true : vm.false,
      );
      try {
        return vm.callFunction(fn, vm.undefined, ...handles);
      } finally {
        for (const h of handles) if (typeof h !== "undefined" && !isSingleton(vm, h)) h.dispose();
        fn.dispose();
      }
    });
  }

  /** Start the model program (a function body). */
  start(source: string): void {
    this.control("start", source).dispose();
    this.drain();
  }

  /**
   * Tool globals; `namesJson` (callable names in catalog order) lets the guest skip parsing
   * metadata; `mcpJson` the MCP namespace and API files; `namespacesJson` plugin namespaces (ABI 5).
   */
  installTools(metadataJson: string, namesJson?: string, mcpJson?: string, namespacesJson?: string): void {
    this.control("installTools", metadataJson, namesJson, mcpJson, namespacesJson).dispose();
  }

  /** The `tool_search_code` guest: only `console` and `openclaw.tools` (fresh VMs, ABI 3 or later). */
  installToolSearch(): void {
    this.control("installToolSearch").dispose();
  }

  /** Deliver one bridge result into its guest-held resolver, then run the jobs it unblocks. */
  settle(id: number, ok: boolean, text: string | undefined): void {
    this.control("settle", id, ok, text).dispose();
    this.drain();
  }

  status(): CellStatus {
    return JSON.parse(this.controlString("status") ?? "{}") as CellStatus;
  }

  /** The completed value's JSON text (undefined when the program returned nothing). */
  valueJson(): string | undefined {
    return this.controlString("value");
  }

  /** The failure message: the program's error, or the first uncaught/unhandled one. */
  errorMessage(): string | undefined {
    return this.controlString("error");
  }

  /** A control method's string result, read only when the guest returned a string. */
  private controlString(method: string): string | undefined {
    const h = this.control(method);
    try {
      return h.isString ? h.toString() : undefined;
    } finally {
      h.dispose();
    }
  }

  /** Run pending jobs, then tell the guest which promises were rejected or later handled. */
  drain(): void {
    this.guarded(() => this.vm.executePendingJobs());
    while (this.rejections.length > 0) {
      const batch = this.rejections;
      this.rejections = [];
      for (const r of batch) {
        try {
          this.guarded(() => {
            const fn = this.ctl.getProp(r.handled ? "noteHandled" : "noteRejection");
            try {
              const args = r.handled ? [r.promise] : [r.promise, r.reason!];
              this.vm.callFunction(fn, this.vm.undefined, ...args).dispose();
            } finally {
              fn.dispose();
            }
          });
        } finally {
          r.promise.dispose();
          r.reason?.dispose();
        }
      }
      this.guarded(() => this.vm.executePendingJobs());
    }
  }

  snapshot(): Snapshot {
    return this.guarded(() => this.vm.snapshot());
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const r of this.rejections) {
      try {
        r.promise.dispose();
        r.reason?.dispose();
      } catch (error) {
        // The instance may already be unusable after a trap.
        logRecord("host_error", { where: "vm.dispose_handles", error });
      }
    }
    this.rejections = [];
    try {
      // A VM that never faulted is whole: its instance can be reset and serve another cell.
      if (this.retire && !this.faulted && this.depth === 0) {
        const vm = this.vm;
        // Once the instance serves another cell, nothing of this wrapper may reach it (a stale
        // handle freed later would free the next cell's memory): drop both references.
        this.vm = undefined as unknown as QuickJS;
        this.ctl = undefined as unknown as JSValueHandle;
        this.reservation?.release();
        return this.retire(vm, this.cap);
      }
      this.vm.dispose();
    } catch (error) {
      // A trapped instance cannot always be torn down cleanly; dropping it is enough.
      logRecord("host_error", { where: "vm.dispose", error });
    } finally {
      this.reservation?.release();
    }
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

function dropQuietly(vm: QuickJS): void {
  try {
    vm.dispose();
  } catch (error) {
    logRecord("host_error", { where: "vm.drop", error });
  }
}

function isSingleton(vm: QuickJS, h: JSValueHandle): boolean {
  return h === vm.undefined || h === vm.true || h === vm.false || h === vm.null;
}
