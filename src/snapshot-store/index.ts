export { compress, decodeSnapshot, decompress, encodeSnapshot, rawSnapshotBytes } from "./snapshot-codec";
export type { ParkedRunState } from "./parked-run";
export { buildPristineImage, pristineImage } from "./pristine-image";
export { SNAPSHOT_SCHEMA, SnapshotStore, type SqlRunner } from "./snapshot-store";
