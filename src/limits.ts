/**
 * Fixed limits that are not configuration. Configurable limits (timeouts, memory, output,
 * snapshot size, TTL, pending calls) come from the resolved `tools.codeMode` options.
 */

/** Suspended cells and resumes in progress per session object (seed: 64 slots). */
export const MAX_SUSPENDED_RUNS = 64;

/** Snapshot chunk size: production SQLite rows are capped at 2 MB. */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;
