/**
 * The image registry: each build's pristine image, kept by digest so a snapshot parked by one
 * build can be rebuilt by a later one (a deploy, which also resets every session object).
 * Production is one SQLite-backed Durable Object (durable-objects/images); tests use an
 * in-memory one. Images cross as page deltas against the engine image (~42 KB gzip'd rather
 * than ~140 KB for the whole image).
 */
export type ImageRecord = {
  digest: string;
  /** Engine id the image (and its delta) belongs to. */
  engine: string;
  /** The prelude source, so a reader can check the image against its digest. */
  prelude: string;
  /** `encodeMemoryDelta` of the image against the engine image. */
  image: Uint8Array;
};

export interface ImageRegistry {
  /** Mark the image as still needed by new parks; false when the registry does not hold it. */
  touch(digest: string): Promise<boolean>;
  put(record: ImageRecord): Promise<void>;
  get(digest: string): Promise<ImageRecord | null>;
}

/**
 * Timing contract between parks and pruning. A build re-confirms its image at most
 * REFRESH_MS before any park that relies on it, and the registry prunes an image only
 * PRUNE_AFTER_MS after its last confirmation, so every image outlives every run parked
 * against it: PRUNE_AFTER_MS − REFRESH_MS (42 h) exceeds the maximum snapshot TTL (24 h).
 */
export const IMAGE_REFRESH_MS = 6 * 3600_000;
export const IMAGE_PRUNE_AFTER_MS = 2 * 86_400_000;

/** The registry is a singleton object under this name. */
export const IMAGE_REGISTRY_NAME = "v1";

/** The RPC surface of the registry object (what the binding's stubs offer). */
export interface ImageRegistryRpc extends Rpc.DurableObjectBranded, ImageRegistry {}

/** The registry behind a Durable Object binding. */
export function registryFromBinding(ns: DurableObjectNamespace<ImageRegistryRpc>): ImageRegistry {
  const stub = () => ns.get(ns.idFromName(IMAGE_REGISTRY_NAME));
  return {
    touch: (digest) => stub().touch(digest),
    put: (record) => stub().put(record),
    get: async (digest) => {
      const r = await stub().get(digest);
      return r ? { digest: r.digest, engine: r.engine, prelude: r.prelude, image: new Uint8Array(r.image) } : null;
    },
  };
}

/** The in-memory pair of the registry object, for tests. */
export class MemoryImageRegistry implements ImageRegistry {
  readonly records = new Map<string, ImageRecord>();
  calls = { touch: 0, put: 0, get: 0 };

  async touch(digest: string): Promise<boolean> {
    this.calls.touch++;
    return this.records.has(digest);
  }

  async put(record: ImageRecord): Promise<void> {
    this.calls.put++;
    this.records.set(record.digest, record);
  }

  async get(digest: string): Promise<ImageRecord | null> {
    this.calls.get++;
    return this.records.get(digest) ?? null;
  }
}

/**
 * Per-isolate memory of the registry: when this isolate last confirmed an image (so a park
 * costs no registry call most of the time), registrations in flight, and the last foreign
 * images fetched (restores of one old build come in bursts after a deploy).
 */
export class ImageCaches {
  readonly confirmedAt = new Map<string, number>();
  readonly registering = new Map<string, Promise<void>>();
  /** When registration last failed, so a registry outage is not hit on every park. */
  failedAt: number | undefined;
  private readonly foreign = new Map<string, Promise<Uint8Array>>();

  constructor(private readonly keepForeign = 2) {}

  /** The memory of a foreign image, fetched once however many restores ask at the same time. */
  foreignImage(digest: string, load: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const hit = this.foreign.get(digest);
    if (hit) {
      this.foreign.delete(digest);
      this.foreign.set(digest, hit);
      return hit;
    }
    const p = load();
    this.foreign.set(digest, p);
    // A failed fetch is not remembered: the next restore asks again.
    p.catch(() => {
      if (this.foreign.get(digest) === p) this.foreign.delete(digest);
    });
    while (this.foreign.size > this.keepForeign) this.foreign.delete(this.foreign.keys().next().value!);
    return p;
  }

  /** Foreign images held in memory (tests). */
  get foreignDigests(): string[] {
    return [...this.foreign.keys()];
  }
}

/** The isolate's caches (module state is per isolate; session objects of one isolate share it). */
export const isolateImageCaches = new ImageCaches();
