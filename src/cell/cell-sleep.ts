import type { CodeModeErrorCode } from "../code-mode";
import { logRecord } from "../observability";
import { GuestFaultError, GuestVm } from "../runtime";
import { rawSnapshotBytes, SnapshotCodec } from "../snapshot-store";
import { CODE_MODE_LABEL, type CellEnvironment, type LiveCell } from "./live-cell";

/**
 * A cell asleep through an operator decision (README "VM memory per isolate"). Waiting for an
 * approval can take up to 4 × `timeoutSeconds`; a live VM would hold its share of the isolate's
 * memory ledger all that time, stalling every other session of the isolate. So the cell's VM is
 * snapshotted, encoded and disposed (its reservation goes back to the ledger) and restored from
 * those bytes once no decision is pending, waiting for room within the cell's (moved) deadline as
 * any VM does. The exec or wait stays in flight throughout (seed 002: the approval stays inside the
 * original exec); the bytes live only in this isolate's memory, so a reset of the session object
 * fails the cell exactly as it fails its approval.
 *
 * Nothing in the guest runs while it sleeps (its budget is paused anyway): timers and host results
 * that come due meanwhile are delivered after the decision, in the order they arrived. A cell too
 * large for `maxSnapshotBytes` keeps its VM and waits as before.
 */

/** A pause shorter than this (a hook's answer) keeps the VM; an operator's decision takes longer. */
export const SLEEP_AFTER_MS = 200;

/**
 * Encoded against the engine image: self-contained, never asks the image registry (the bytes
 * live seconds to minutes, in this isolate only, and never cross a deploy).
 */
const codec = new SnapshotCodec(null);

export type SleepingCell = { bytes: Uint8Array; abi: number; controlToken: number };

export type SleepOutcome =
  | { kind: "asleep"; sleeping: SleepingCell }
  /** The VM is kept: `always` when it cannot sleep at all (too large; linear memory never shrinks), else only now. */
  | { kind: "awake"; always: boolean };

export type WakeOutcome = { ok: true } | { ok: false; message: string; code: CodeModeErrorCode };

/** Whether a cell waiting for a decision should sleep now: paused long enough, and none of its own timers due soon. */
export function shouldSleep(cell: LiveCell, pausedFor: number, now: number): boolean {
  if (pausedFor < SLEEP_AFTER_MS) return false;
  // A timer about to fire is work the guest is doing (zero-delay loops spend their budget): stay live.
  const due = cell.bridge.nextTimerDue();
  return due === undefined || due - now >= SLEEP_AFTER_MS;
}

/**
 * Snapshot and dispose the cell's VM (its ledger reservation is released), or keep it: too large
 * for maxSnapshotBytes, a snapshot that failed (logged), or a decision that came while encoding.
 * A guest fault is rethrown: the VM is poisoned and the cell ends as for any fault.
 */
export async function putToSleep(cell: LiveCell, env: CellEnvironment): Promise<SleepOutcome> {
  const limit = env.options.maxSnapshotBytes;
  const vm = cell.vm;
  try {
    // Memory in use is a lower bound of the snapshot: decide before copying the whole VM.
    if (vm.allocatedBytes() > limit) return { kind: "awake", always: true };
    const snapshot = vm.snapshot();
    if (rawSnapshotBytes(snapshot) > limit) return { kind: "awake", always: true };
    const bytes = await codec.encode(snapshot, vm.abi);
    // The decision or a cancellation came while encoding: the VM is still here, keep using it.
    if (!env.pause?.active || env.signal.aborted) return { kind: "awake", always: false };
    const sleeping: SleepingCell = { bytes, abi: vm.abi, controlToken: vm.controlToken };
    vm.dispose();
    return { kind: "asleep", sleeping };
  } catch (error) {
    if (error instanceof GuestFaultError) throw error;
    logRecord("host_error", { where: "cell.sleep", error });
    return { kind: "awake", always: true };
  }
}

/** Until no decision is pending, or the run is cancelled. */
export function untilDecided(env: CellEnvironment): Promise<void> {
  const { pause, signal } = env;
  if (!pause?.active || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done);
    pause.whenIdle().then(done, done);
  });
}

/**
 * Restore a sleeping cell into a new VM bound to its own budget and bridge: room in the ledger
 * first, within `deadline` (the cell's, moved by the time paused). A failure leaves the cell
 * without a VM, for the caller to end with the failure given.
 */
export async function wake(cell: LiveCell, sleeping: SleepingCell, deadline: number, env: CellEnvironment): Promise<WakeOutcome> {
  const label = env.label ?? CODE_MODE_LABEL;
  // What a decision let through (an approved call) may be running or done: the model must know.
  const ran = "a call the decision allowed may already have run; check before retrying";
  const roomWait = { deadline, clock: env.clock, signal: env.signal, owner: env.vms.owner };
  const noRoom = (outcome: { reason: "aborted" } | { reason: "exhausted"; message: string }): WakeOutcome =>
    outcome.reason === "aborted"
      ? { ok: false, message: "the code mode run was aborted", code: "aborted" }
      : {
          ok: false,
          message: `${label.cell} gave its VM memory back while it waited for an operator's decision and could not get it back within its deadline (${outcome.message}); ${ran}`,
          code: "runtime_unavailable",
        };
  const room = await env.vms.pool.reserve(env.options.memoryLimitBytes, roomWait);
  if (!room.ok) return noRoom(room);
  try {
    const { snapshot } = await codec.decode(sleeping.bytes);
    // The restored VM holds its snapshot's memory from the start: room for all of it first.
    const fitted = await env.vms.pool.fit(room.limits, snapshot.memory.byteLength, roomWait);
    if (!fitted.ok) {
      room.limits.reservation.release();
      return noRoom(fitted);
    }
    // The restored VM owns the reservation from here (and releases it itself if it cannot start).
    const instance = env.vms.pool.instanceFor(snapshot.memory.byteLength);
    cell.vm = env.vms.pool.keep(await GuestVm.restore(snapshot, sleeping.controlToken, room.limits, cell.guard, cell.bridge, sleeping.abi, instance));
    return { ok: true };
  } catch (error) {
    room.limits.reservation.release();
    logRecord("host_error", { where: "cell.wake", error });
    return { ok: false, message: `${label.cell} could not be restored after the operator's decision; ${ran}`, code: "internal_error" };
  }
}
