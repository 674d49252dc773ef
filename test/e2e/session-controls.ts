/**
 * What e2e tests set on the session objects' dependencies (test/e2e/entry.ts): the clock, small
 * limits, a failing VM pool, an object's environment. Everything is put back after each test
 * (test/e2e/reset-session-controls.ts).
 */
import { SESSION_LIMIT_DEFAULTS, type SessionLimits } from "../../src/config";
import type { Clock } from "../../src/runtime";
import { SnapshotCodec } from "../../src/snapshot-store";
import { overlaySessionEnv } from "../support/session-probe";
import { testClock, testLimits, testVmPool, type VmFault } from "./entry";
import { sessionStub, sleep } from "./helpers";
import { expect } from "vitest";

export { testVmPool };

/**
 * No cell VM alive: once the isolate's ledger holds only what the pool keeps for no cell (its spares
 * and setup images), within ~2 s, it must hold exactly that: nothing a cell had is left reserved.
 */
export async function expectOnlyIdleHeld(): Promise<void> {
  for (let i = 0; i < 200 && testVmPool.ledger.reservations !== testVmPool.idle.count; i++) await sleep(10);
  expect(testVmPool.ledger.reservations).toBe(testVmPool.idle.count);
  expect(testVmPool.ledger.reservedBytes).toBe(testVmPool.idle.bytes);
}

/** Every session object (and the image registry) reads time from `clock` until the test ends. */
export function setClock(clock: Clock): void {
  testClock.current = clock;
}

/** Session limits for every session object until the test ends: the defaults with `limits` over them, unclamped. */
export function setLimits(limits: Partial<SessionLimits>): void {
  testLimits.current = { ...SESSION_LIMIT_DEFAULTS, ...limits };
}

/** The VM pool fails this way (null: it works) until the test ends. */
export function setVmFault(fault: VmFault | null): void {
  testVmPool.fault = fault;
}

/** Variables laid over one session object's environment (undefined: its own again), read on its next use. */
export function setSessionEnv(session: string, vars: Record<string, unknown> | undefined, tenant = "tenant-a"): void {
  overlaySessionEnv(sessionStub(session, tenant).id.toString(), vars);
}

const codecOps = { encode: SnapshotCodec.prototype.encode, decode: SnapshotCodec.prototype.decode };

/**
 * The next snapshot encode (a park) or decode (a restore) of any session object fails with `error`,
 * as a storage or codec fault would; later ones work (and everything is back after the test).
 */
export function failNextCodec(op: "encode" | "decode", error: Error): void {
  (SnapshotCodec.prototype as unknown as Record<string, unknown>)[op] = function () {
    SnapshotCodec.prototype[op] = codecOps[op] as never;
    return Promise.reject(error);
  };
}

/** The codec as built (reset after each test). */
export function resetCodecFaults(): void {
  SnapshotCodec.prototype.encode = codecOps.encode;
  SnapshotCodec.prototype.decode = codecOps.decode;
}
