export { compress, decodeSnapshot, decompress, encodeSnapshot, rawSnapshotBytes, SnapshotCodec, type ParkedSnapshot } from "./snapshot-codec";
export { buildEngineImage, engineImage, type EngineImage } from "./engine-image";
export {
  ImageCaches,
  IMAGE_PRUNE_AFTER_MS,
  IMAGE_REFRESH_MS,
  MemoryImageRegistry,
  registryFromBinding,
  type ImageRecord,
  type ImageRegistry,
  type ImageRegistryRpc,
} from "./image-registry";
export { ImageStore, IMAGE_SCHEMA } from "./image-store";
export type { ParkedRunState } from "./parked-run";
export { buildPristineImage, pristineImage } from "./pristine-image";
export { restoreFailure, SnapshotRestoreError, type SnapshotRestoreReason } from "./snapshot-restore-error";
export { sha256Hex } from "./digest";
export { SNAPSHOT_SCHEMA, SnapshotStore, type SqlRunner } from "./snapshot-store";

export { IMAGE_REGISTRY_NAME, isolateImageCaches } from "./image-registry";

export { pristineDigest, type PristineImage } from "./pristine-image";
export {
  SNAPSHOT_FORMAT,
  SnapshotFormatError,
  writeSnapshot,
  openSnapshot,
  encodeMemoryDelta,
  decodeMemoryDelta,
  serializeSnapshot,
  deserializeSnapshot,
  type SnapshotBase,
  type SnapshotHeader,
  type OpenedSnapshot,
} from "./snapshot-format";

export { SNAPSHOT_SCHEMA_RESUMING, RESULT_ROW_OVERHEAD, type WriteGuard } from "./snapshot-store";
