import { logRecord } from "../observability";
import type { GuestVm, VmImage } from "./guest-vm";
import type { MemoryLedger, MemoryReservation } from "./memory-ledger";

/**
 * What a cell's VM gets before the program: a turn's tool globals (code mode's tools, the MCP
 * namespace and its API files, plugin namespaces) or Tool Search's bridge. The same object for
 * every cell it applies to: its identity names it, so two setups are the same only when they
 * are the same object (the turn layer shares one per content; see cell-environment.ts).
 */
export interface VmSetup {
  install(vm: GuestVm): void;
}

/** Images kept per isolate, and the largest one kept (a turn's MCP files and catalog are inside). */
const MAX_IMAGES = 2;
const MAX_IMAGE_BYTES = 4 << 20;

/**
 * Images of VMs with a setup installed, so the next VM for that setup is a copy of one (a memory
 * copy) instead of a pristine VM that installs it again: a turn with a 300-tool MCP server copies
 * its declarations into every cell's VM otherwise, and the VM it grows no longer fits the pristine
 * image to be reused. Kept from a setup's second install (a setup seen once costs no copy), at
 * most MAX_IMAGES, least recently used dropped first; each holds its bytes in the isolate's memory
 * ledger, and all go when the ledger runs short. An image is taken before any cell code ran in
 * its VM, and every VM made from it gets its own Math.random seed.
 */
export class SetupImages {
  private installs = new WeakMap<VmSetup, number>();
  private kept = new Map<VmSetup, { image: VmImage; reservation: MemoryReservation }>();

  constructor(private readonly ledger: MemoryLedger) {}

  /** The image of `setup`, if kept (and now the most recently used). */
  get(setup: VmSetup): VmImage | undefined {
    const entry = this.kept.get(setup);
    if (!entry) return undefined;
    this.kept.delete(setup);
    this.kept.set(setup, entry);
    return entry.image;
  }

  /** `vm` has just had `setup` installed and has run nothing else. */
  installed(setup: VmSetup, vm: GuestVm): void {
    if (this.kept.has(setup)) return;
    const count = (this.installs.get(setup) ?? 0) + 1;
    this.installs.set(setup, count);
    if (count < 2) return;
    const bytes = vm.memoryBytes;
    if (bytes > MAX_IMAGE_BYTES) return;
    const reservation = this.ledger.tryReserve(bytes);
    if (!reservation) return;
    let image: VmImage;
    try {
      image = vm.image();
    } catch (error) {
      reservation.release();
      logRecord("host_error", { where: "setup_images.keep", error });
      return;
    }
    this.kept.set(setup, { image, reservation });
    for (const [old, entry] of this.kept) {
      if (this.kept.size <= MAX_IMAGES) break;
      entry.reservation.release();
      this.kept.delete(old);
    }
  }

  /** Images held, and their bytes in the ledger. */
  get size(): { images: number; bytes: number } {
    let bytes = 0;
    for (const entry of this.kept.values()) bytes += entry.reservation.bytes;
    return { images: this.kept.size, bytes };
  }

  /** Give every image up (the ledger is short of room). */
  drop(): void {
    for (const entry of this.kept.values()) entry.reservation.release();
    this.kept.clear();
  }
}
