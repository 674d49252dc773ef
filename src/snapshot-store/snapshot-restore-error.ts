/**
 * Why a parked run's snapshot could not become a VM again. Every reason but
 * `base_unavailable` is permanent: the run can never be resumed and is dropped.
 * `base_unavailable` (the image registry did not answer) is transient: the run stays parked
 * until its TTL and a later `wait` tries again.
 */
export type SnapshotRestoreReason =
  "missing" | "corrupt" | "engine_upgraded" | "unknown_abi" | "base_missing" | "base_unavailable" | "restore_failed";

export class SnapshotRestoreError extends Error {
  constructor(
    readonly reason: SnapshotRestoreReason,
    /** Says why, for the model: completes "code mode run could not be restored (…)". */
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }

  get retryable(): boolean {
    return this.reason === "base_unavailable";
  }
}

/** The model-facing failure of a `wait` whose restore failed, and whether the run is kept. */
export function restoreFailure(error: unknown): { message: string; keepRun: boolean } {
  const e = error instanceof SnapshotRestoreError ? error : new SnapshotRestoreError("restore_failed", "the engine refused the snapshot");
  if (e.retryable) {
    return { message: `code mode run could not be restored right now (${e.detail}); it is still parked: call wait again later.`, keepRun: true };
  }
  return { message: `code mode run could not be restored (${e.detail}); it cannot be resumed.`, keepRun: false };
}
