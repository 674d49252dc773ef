export { compress, decompress, deserializeSnapshot, serializeSnapshot } from "./snapshot-codec";
export type { ParkedRunState } from "./parked-run";
export { SNAPSHOT_SCHEMA, SnapshotStore, type SqlRunner } from "./snapshot-store";
