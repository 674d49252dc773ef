import type { Snapshot } from "quickjs-wasi";
import { logRecord } from "../observability";
import { systemClock, type Clock } from "../runtime";
import { DRIVABLE_GUEST_ABI } from "../runtime";
import { GUEST_ABI_VERSION } from "../runtime";
import { engineImage, type EngineImage } from "./engine-image";
import { IMAGE_REFRESH_MS, isolateImageCaches, type ImageCaches, type ImageRegistry } from "./image-registry";
import { pristineDigest, pristineImage, type PristineImage } from "./pristine-image";
import { decodeMemoryDelta, encodeMemoryDelta, openSnapshot, SnapshotFormatError, writeSnapshot, type SnapshotBase } from "./snapshot-format";
import { SnapshotRestoreError } from "./snapshot-restore-error";

export { compress, decompress, deserializeSnapshot, rawSnapshotBytes, serializeSnapshot } from "./snapshot-format";

/** A decoded snapshot and the guest ABI of the prelude inside it. */
export type ParkedSnapshot = { snapshot: Snapshot; abi: number };

type CodecOptions = {
  caches?: ImageCaches;
  clock?: Clock;
  /** A park waits this long for a first registration before parking self-contained. */
  registerTimeoutMs?: number;
  /** After a failed registration, parks go self-contained without asking for this long. */
  retryAfterMs?: number;
};

/**
 * Parked snapshots that survive deploys. A park XORs the VM against this build's pristine
 * image (≈11 KB for a small cell) once the image registry has confirmed it holds that image;
 * until it has (registry unbound, down or slow), the park XORs against the engine image
 * instead (≈46 KB, but self-contained), so a registry failure never makes a run depend on an
 * image nobody kept. A restore rebuilds the base the header names: this build's image, the
 * engine image, or another build's image fetched from the registry. What it cannot rebuild
 * fails with a SnapshotRestoreError saying why (another engine, an ABI this host cannot
 * drive, an image no longer kept, …).
 */
export class SnapshotCodec {
  /** Per-isolate registry memory (shared by the isolate's session objects unless a test passes its own). */
  readonly caches: ImageCaches;
  private readonly clock: Clock;
  private readonly registerTimeoutMs: number;
  private readonly retryAfterMs: number;

  /** `registry`: null when no registry is bound (every park is then self-contained). Replaceable in tests. */
  constructor(
    public registry: ImageRegistry | null,
    options: CodecOptions = {},
  ) {
    this.caches = options.caches ?? isolateImageCaches;
    this.clock = options.clock ?? systemClock;
    this.registerTimeoutMs = options.registerTimeoutMs ?? 3000;
    this.retryAfterMs = options.retryAfterMs ?? 30_000;
  }

  /** Stored bytes for a VM snapshot; `abi` is the VM's guest ABI (`GuestVm.abi`). */
  async encode(snapshot: Snapshot, abi: number): Promise<Uint8Array> {
    const [engine, image] = await Promise.all([engineImage(), pristineImage()]);
    if (await this.imageKept(engine, image)) {
      return writeSnapshot(snapshot, { abi, engine: engine.id, base: { kind: "image", digest: image.digest } }, image.memory);
    }
    return writeSnapshot(snapshot, { abi, engine: engine.id, base: { kind: "engine" } }, engine.memory);
  }

  /** The snapshot back, or a SnapshotRestoreError saying why it cannot be. */
  async decode(bytes: Uint8Array): Promise<ParkedSnapshot> {
    const opened = await openSnapshot(bytes).catch((error) => {
      throw error instanceof SnapshotFormatError ? new SnapshotRestoreError("corrupt", `the snapshot is corrupt: ${error.message}`) : error;
    });
    const { header } = opened;
    const engine = await engineImage();
    if (header.engine !== undefined && header.engine !== engine.id) {
      throw new SnapshotRestoreError(
        "engine_upgraded",
        `the sandbox engine was upgraded since it was parked, from ${header.engine} to ${engine.id}, and a VM snapshot cannot move between engines`,
      );
    }
    if (!DRIVABLE_GUEST_ABI.includes(header.abi)) {
      throw new SnapshotRestoreError(
        "unknown_abi",
        `it was parked with guest ABI version ${header.abi}, which this build cannot drive (it drives version ${DRIVABLE_GUEST_ABI.join(", ")})`,
      );
    }
    const base = await this.baseMemory(header.base, header.format, engine);
    try {
      return { snapshot: opened.patch(base), abi: header.abi };
    } catch (error) {
      if (error instanceof SnapshotFormatError) throw new SnapshotRestoreError("corrupt", `the snapshot is corrupt: ${error.message}`);
      throw error;
    }
  }

  private async baseMemory(base: SnapshotBase, format: 1 | 2, engine: EngineImage): Promise<Uint8Array> {
    if (base.kind === "engine") return engine.memory;
    const local = await pristineImage();
    if (base.digest === local.digest) return local.memory;
    const short = base.digest.slice(0, 12);
    if (!this.registry) {
      throw new SnapshotRestoreError("base_missing", `it was parked by another build (image ${short}…) and no image registry is bound`);
    }
    const registry = this.registry;
    try {
      return await this.caches.foreignImage(base.digest, async () => {
        const record = await registry.get(base.digest).catch((error: unknown) => {
          throw new SnapshotRestoreError(
            "base_unavailable",
            `the image registry did not answer: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
        if (!record) {
          throw new SnapshotRestoreError(
            "base_missing",
            format === 1
              ? `it was parked by an earlier build (image ${short}…) whose base image was not kept`
              : `the base image of the build that parked it (${short}…) is no longer kept`,
          );
        }
        if (record.engine !== engine.id) {
          throw new SnapshotRestoreError("engine_upgraded", `its base image belongs to engine ${record.engine}, and this build runs ${engine.id}`);
        }
        const memory = (await decodeMemoryDelta(record.image)).memory(engine.memory);
        // A wrong base would restore a VM that runs garbage: check the image against its digest.
        if ((await pristineDigest(memory, record.prelude)) !== base.digest) {
          throw new SnapshotRestoreError("base_missing", `the registry's image ${short}… does not match its digest`);
        }
        return memory;
      });
    } catch (error) {
      if (error instanceof SnapshotRestoreError) throw error;
      if (error instanceof SnapshotFormatError) throw new SnapshotRestoreError("base_missing", `the registry's image ${short}… is unreadable`);
      throw error;
    }
  }

  /**
   * True when the registry is known to keep this build's image for longer than any run parked
   * now: confirmed within IMAGE_REFRESH_MS by this isolate, or confirmed now (touch, and put if
   * missing) within the registration timeout.
   */
  private async imageKept(engine: EngineImage, image: PristineImage): Promise<boolean> {
    const registry = this.registry;
    if (!registry) return false;
    const now = this.clock.now();
    const confirmed = this.caches.confirmedAt.get(image.digest);
    if (confirmed !== undefined && now - confirmed < IMAGE_REFRESH_MS) return true;
    const failed = this.caches.failedAt;
    if (failed !== undefined && now - failed < this.retryAfterMs) return false;
    let inFlight = this.caches.registering.get(image.digest);
    if (!inFlight) {
      inFlight = (async () => {
        if (await registry.touch(image.digest)) return;
        const delta = await encodeMemoryDelta({ engine: engine.id }, image.memory, engine.memory);
        await registry.put({ digest: image.digest, engine: engine.id, prelude: image.prelude, image: delta });
      })().then(
        () => {
          this.caches.confirmedAt.set(image.digest, now);
          this.caches.failedAt = undefined;
        },
        (error: unknown) => {
          this.caches.failedAt = this.clock.now();
          // Parked runs are stored self-contained (against the engine image) until it answers.
          logRecord("host_error", { where: "image_registry.register", error });
          throw error;
        },
      );
      const registering = inFlight;
      this.caches.registering.set(image.digest, registering);
      void registering
        .finally(() => {
          if (this.caches.registering.get(image.digest) === registering) this.caches.registering.delete(image.digest);
        })
        .catch(() => {
          // Already logged above (image_registry.register); this copy only clears the slot.
        });
    }
    let timer: ReturnType<typeof setTimeout> | null = null;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => {
        // Too slow counts as down: the next parks do not wait on it again until the back-off ends.
        this.caches.failedAt = this.clock.now();
        resolve(false);
      }, this.registerTimeoutMs);
    });
    try {
      return await Promise.race([
        inFlight.then(
          () => true,
          () => false,
        ),
        timeout,
      ]);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }
}

/** This build's snapshots without a registry (benchmarks and tests): always against its own image. */
export async function encodeSnapshot(snapshot: Snapshot, abi = GUEST_ABI_VERSION): Promise<Uint8Array> {
  const [engine, image] = await Promise.all([engineImage(), pristineImage()]);
  return writeSnapshot(snapshot, { abi, engine: engine.id, base: { kind: "image", digest: image.digest } }, image.memory);
}

/** Decode without a registry (benchmarks and tests): the snapshot alone, or a SnapshotRestoreError. */
export async function decodeSnapshot(bytes: Uint8Array): Promise<Snapshot> {
  return (await new SnapshotCodec(null).decode(bytes)).snapshot;
}
