/**
 * The gateway project's Worker (vitest.config.ts): src/index.ts's gateway (the demo plugin) built
 * with dependencies the e2e tests control, the way an embedding passes its own. The clock, the
 * session limits and the isolate's VM pool are constructor dependencies of the session object;
 * its class is the storage probe (test/support/session-probe.ts) over the production class. Tests
 * import the controls below (the Worker runs in the tests' isolate) and set them; the setup file
 * test/e2e/reset-session-controls.ts puts them back after every test.
 */
import { createImageRegistry } from "../../durable-objects/images";
import { createSessionObject } from "../../durable-objects/session";
import type { SessionLimits } from "../../src/config";
import { createGateway } from "../../src/gateway";
import { demoPlugin } from "../../src/plugins";
import { swarmPlugin } from "../../src/swarm";
import { MemoryLedger, systemClock, VmPool, type Clock, type VmTake } from "../../src/runtime";
import { resetSessionEnvOverlays, withSessionProbe } from "../support/session-probe";

/** The clock every session object and the image registry read: the system clock until a test sets another. */
export const testClock = {
  current: systemClock as Clock,
  now(): number {
    return this.current.now();
  },
};

/** Small session limits for a test (whole, unclamped), or the config's. */
export const testLimits: { current: SessionLimits | undefined } = { current: undefined };

/** How the VM pool fails, if it does: what a broken engine looks like to the session. */
export type VmFault = "cannot_start" | "no_sandbox" | "broken";

/** The isolate's memory ledger (80 MiB, as createGateway's default); `broken` makes every use of it throw. */
class TestLedger extends MemoryLedger {
  fault: VmFault | null = null;
  override effectiveLimit(memoryLimitBytes: number): number {
    if (this.fault === "broken") throw new TypeError("the VM pool is broken (injected)");
    return super.effectiveLimit(memoryLimitBytes);
  }
}

class TestVmPool extends VmPool {
  constructor(readonly testLedger: TestLedger) {
    super(testLedger);
  }
  set fault(fault: VmFault | null) {
    this.testLedger.fault = fault;
  }
  get fault(): VmFault | null {
    return this.testLedger.fault;
  }
  override sandboxStarts(): Promise<boolean> {
    return this.fault === "no_sandbox" ? Promise.resolve(false) : super.sandboxStarts();
  }
  // Every argument is passed on: dropping the setup would hand every cell a pristine VM and leave setup images untested.
  override take(...args: Parameters<VmPool["take"]>): Promise<VmTake> {
    return this.fault === "cannot_start" ? Promise.reject(new Error("wasm instantiation failed")) : super.take(...args);
  }
  override refillSoon(...args: Parameters<VmPool["refillSoon"]>): void {
    if (this.fault !== "cannot_start") super.refillSoon(...args);
  }
}

/** The isolate's VM pool and ledger, shared by every session object (tests read the ledger and hold room in it). */
export const testVmPool = new TestVmPool(new TestLedger());

/** Everything back to production behaviour (after each test). */
export function resetSessionControls(): void {
  testClock.current = systemClock;
  testLimits.current = undefined;
  testVmPool.fault = null;
  resetSessionEnvOverlays();
}

const gateway = createGateway({ plugins: [swarmPlugin, demoPlugin] });

export default gateway.worker;
export class SessionDurableObject extends withSessionProbe(
  createSessionObject([swarmPlugin, demoPlugin], testVmPool, { clock: testClock, limits: () => testLimits.current }),
) {}
export class PristineImageRegistry extends createImageRegistry(testClock) {
  /** When its prune alarm is due (tests). */
  alarmAt(): Promise<number | null> {
    return this.ctx.storage.getAlarm();
  }
}
