import { GuestVm, type GuestLimits } from "./guest-vm";

/**
 * One warm spare VM per isolate, so an `exec` does not pay for instantiating QuickJS and
 * evaluating the prelude on its critical path. A spare is never reused: it is handed to
 * exactly one cell (isolation per exec holds), and the next spare is made after that
 * cell's answer is out. Restores do not use the pool.
 */
export class VmPool {
  private spare: { limit: number; vm: Promise<GuestVm | null> } | null = null;
  private refillTimer: ReturnType<typeof setTimeout> | null = null;

  /** The spare for this memory limit, or a freshly prepared VM. */
  async take(limits: GuestLimits): Promise<GuestVm> {
    const spare = this.spare;
    this.spare = null;
    if (spare && spare.limit === limits.memoryLimitBytes) {
      const vm = await spare.vm;
      if (vm && !vm.isDisposed) return vm;
    } else if (spare) {
      void spare.vm.then((vm) => vm?.dispose());
    }
    return GuestVm.prepare(limits);
  }

  /** Prepare the next spare once the current request has been answered. */
  refillSoon(limits: GuestLimits): void {
    if (this.spare || this.refillTimer) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = null;
      if (this.spare) return;
      this.spare = { limit: limits.memoryLimitBytes, vm: GuestVm.prepare(limits).catch(() => null) };
    }, 0);
  }
}

/** The isolate's pool (module state is per isolate; Durable Objects of one isolate share it). */
export const vmPool = new VmPool();
