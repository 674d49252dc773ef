import { describe, expect, it } from "vitest";
import type { Snapshot } from "quickjs-wasi";
// quickjs-wasi's own build of the engine, which wasm/quickjs.wasm instruments (scripts/instrument-quickjs.mjs).
import packageEngine from "quickjs-wasi/quickjs.wasm";
import { CODE_MODE_LIMITS } from "../../../src/config";
import { manualClock } from "../../../src/runtime";
import { GUEST_ABI_VERSION } from "../../../src/runtime";
import { DRIVABLE_GUEST_ABI, GuestVm, type GuestHost } from "../../../src/runtime";
import { InterruptGuard } from "../../../src/runtime";
import {
  buildEngineImage,
  engineImage,
  IMAGE_PRUNE_AFTER_MS,
  IMAGE_REFRESH_MS,
  ImageCaches,
  MemoryImageRegistry,
  pristineImage,
  restoreFailure,
  SnapshotCodec,
  SnapshotRestoreError,
  type ImageRecord,
  type ImageRegistry,
} from "../../../src/snapshot-store";
import { encodeFormat1, headerOf, otherBuild, rewrite } from "../../support/snapshot-fixtures";

const LIMITS = { memoryLimitBytes: 64 << 20 };
const guard = () => new InterruptGuard({ now: () => Date.now() }, Date.now() + 10_000, 10_000);

function yieldHost(): GuestHost & { yieldId: number } {
  return {
    yieldId: -1,
    request(id, op) {
      if (op === "yield") this.yieldId = id;
    },
    output() {},
    cancel() {},
  };
}

/** A cell parked on yield_control: its snapshot, control token and yield request id. */
async function parkedCell(code = "const n = [20, 21].reduce((a, b) => a + b, 1); await yield_control(); return n;") {
  const host = yieldHost();
  const vm = await GuestVm.create(LIMITS, guard(), host);
  vm.installTools("[]");
  vm.start(code);
  const snapshot = vm.snapshot();
  const parked = { snapshot: { ...snapshot, memory: snapshot.memory.slice() }, controlToken: vm.controlToken, yieldId: host.yieldId };
  vm.dispose();
  return parked;
}

/** Restore, deliver the yield, and return the completed value's JSON. */
async function resume(parked: { snapshot: Snapshot; abi: number }, cell: { controlToken: number; yieldId: number }): Promise<string | undefined> {
  const vm = await GuestVm.restore(parked.snapshot, cell.controlToken, LIMITS, guard(), yieldHost(), parked.abi);
  try {
    vm.settle(cell.yieldId, true, undefined);
    expect(vm.status().state).toBe("completed");
    return vm.valueJson();
  } finally {
    vm.dispose();
  }
}

function sameMemory(a: Snapshot, b: Snapshot): boolean {
  return a.memory.length === b.memory.length && Buffer.from(a.memory).equals(Buffer.from(b.memory));
}

async function restoreError(p: Promise<unknown>): Promise<SnapshotRestoreError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SnapshotRestoreError);
  return error as SnapshotRestoreError;
}

/** A registry whose every call fails (the object unreachable). */
class DownRegistry implements ImageRegistry {
  calls = 0;
  async touch(): Promise<boolean> {
    this.calls++;
    throw new Error("registry object unreachable");
  }
  async put(): Promise<void> {
    this.calls++;
    throw new Error("registry object unreachable");
  }
  async get(): Promise<ImageRecord | null> {
    this.calls++;
    throw new Error("registry object unreachable");
  }
}

const quiet = { retryAfterMs: 30_000 };

describe("engine image", () => {
  it("is the same bytes and id in every build of this engine, and names the engine's versions", async () => {
    const a = await buildEngineImage();
    const b = await buildEngineImage();
    expect(b.id).toBe(a.id);
    expect(Buffer.from(b.memory).equals(Buffer.from(a.memory))).toBe(true);
    expect(a.id).toMatch(/^quickjs-wasi 3\.7\.0 \(quickjs [\d.]+, image [0-9a-f]{16}\)$/);
    // It carries no prelude: the pristine image (engine + prelude) differs from it.
    const image = await pristineImage();
    expect(Buffer.from(image.memory.subarray(0, a.memory.length)).equals(Buffer.from(a.memory))).toBe(false);
  });

  it("is the package's own engine's: the stack low-water mark changes no byte, so runs parked by a build without it restore", async () => {
    const ours = await buildEngineImage();
    const theirs = await buildEngineImage(packageEngine);
    expect(theirs.id).toBe(ours.id);
    expect(Buffer.from(theirs.memory).equals(Buffer.from(ours.memory))).toBe(true);
  });
});

describe("snapshot codec: parks", () => {
  it("parks against this build's image once the registry confirms it, asking the registry once per isolate", async () => {
    const registry = new MemoryImageRegistry();
    const codec = new SnapshotCodec(registry, { caches: new ImageCaches() });
    const cell = await parkedCell();
    const first = await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    const second = await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    const image = await pristineImage();
    expect(await headerOf(first)).toMatchObject({
      format: 2,
      abi: GUEST_ABI_VERSION,
      engine: (await engineImage()).id,
      base: { kind: "image", digest: image.digest },
    });
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
    expect(registry.calls).toEqual({ touch: 1, put: 1, get: 0 });
    expect([...registry.records.keys()]).toEqual([image.digest]);
    // A small cell stays small: the registry keeps the base, not the snapshot.
    expect(first.length).toBeLessThan(16 * 1024);
    expect(await resume(await codec.decode(first), cell)).toBe("42");
  });

  it("re-confirms the image after IMAGE_REFRESH_MS, so the registry never prunes an image a fresh park relies on", async () => {
    const registry = new MemoryImageRegistry();
    const clock = manualClock(1_000_000);
    const codec = new SnapshotCodec(registry, { caches: new ImageCaches(), clock });
    const cell = await parkedCell();
    await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    clock.advance(IMAGE_REFRESH_MS - 1);
    await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    expect(registry.calls.touch).toBe(1);
    clock.advance(1);
    await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    expect(registry.calls).toEqual({ touch: 2, put: 1, get: 0 });
  });

  it("the prune window outlives any run: an image confirmed before a park is kept past the maximum TTL", () => {
    expect(IMAGE_PRUNE_AFTER_MS - IMAGE_REFRESH_MS).toBeGreaterThan(CODE_MODE_LIMITS.snapshotTtlSeconds.max * 1000);
  });

  it("registry unavailable at park: the run parks self-contained against the engine image and restores with no registry at all", async () => {
    const down = new DownRegistry();
    const clock = manualClock(5_000_000);
    const codec = new SnapshotCodec(down, { caches: new ImageCaches(), clock, ...quiet });
    const cell = await parkedCell();
    const bytes = await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    expect((await headerOf(bytes)).base).toEqual({ kind: "engine" });
    // Restores need neither the registry nor this build's image.
    const parked = await new SnapshotCodec(null).decode(bytes);
    expect(sameMemory(parked.snapshot, cell.snapshot)).toBe(true);
    expect(await resume(await codec.decode(bytes), cell)).toBe("42");
    // A down registry is not asked on every park; after the back-off it is, and a recovered
    // registry brings parks back to the small image-based form.
    await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    expect(down.calls).toBe(1);
    const recovered = new MemoryImageRegistry();
    codec.registry = recovered;
    clock.advance(quiet.retryAfterMs);
    const later = await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    expect((await headerOf(later)).base.kind).toBe("image");
    expect(recovered.calls.put).toBe(1);
    expect(later.length).toBeLessThan(bytes.length);
  });

  it("a registry that never answers does not hold parks: past the registration timeout the run parks self-contained", async () => {
    const hanging: ImageRegistry = { touch: () => new Promise(() => {}), put: () => new Promise(() => {}), get: () => new Promise(() => {}) };
    const caches = new ImageCaches();
    const codec = new SnapshotCodec(hanging, { caches, registerTimeoutMs: 5 });
    const cell = await parkedCell();
    const bytes = await codec.encode(cell.snapshot, GUEST_ABI_VERSION);
    expect((await headerOf(bytes)).base).toEqual({ kind: "engine" });
    // Too slow counts as down: later parks of the isolate do not wait on it again (with no
    // timeout at all, this park would hang if it did).
    const patient = new SnapshotCodec(hanging, { caches, registerTimeoutMs: 2 ** 31 - 1 });
    expect((await headerOf(await patient.encode(cell.snapshot, GUEST_ABI_VERSION))).base).toEqual({ kind: "engine" });
  });

  it("no registry bound: every park is self-contained", async () => {
    const cell = await parkedCell();
    const bytes = await new SnapshotCodec(null).encode(cell.snapshot, GUEST_ABI_VERSION);
    expect((await headerOf(bytes)).base).toEqual({ kind: "engine" });
    expect(await resume(await new SnapshotCodec(null).decode(bytes), cell)).toBe("42");
  });

  it("records the ABI of the VM it parks, not this build's (a re-parked VM keeps the ABI it was parked with)", async () => {
    const cell = await parkedCell();
    const bytes = await new SnapshotCodec(null).encode(cell.snapshot, 7);
    expect((await headerOf(bytes)).abi).toBe(7);
  });
});

describe("snapshot codec: restores after a deploy", () => {
  it("a snapshot parked by another build is rebuilt from that build's image, fetched from the registry once", async () => {
    const other = await otherBuild("build-foreign-1");
    const local = await pristineImage();
    expect(other.digest).not.toBe(local.digest);
    const registry = new MemoryImageRegistry();
    await registry.put(other.record);
    const caches = new ImageCaches();
    const codec = new SnapshotCodec(registry, { caches });
    const cell = await parkedCell();
    const bytes = await rewrite(cell.snapshot, { base: { kind: "image", digest: other.digest }, baseMemory: other.memory });
    const parked = await codec.decode(bytes);
    // Bit-exact only if the other build's image was the base: this build's would corrupt it.
    expect(sameMemory(parked.snapshot, cell.snapshot)).toBe(true);
    expect(await resume(parked, cell)).toBe("42");
    await codec.decode(bytes);
    expect(registry.calls.get).toBe(1);
    expect(caches.foreignDigests).toEqual([other.digest]);
  });

  it("keeps only the last two foreign images in memory", async () => {
    const caches = new ImageCaches();
    const load = (n: number) => async () => new Uint8Array([n]);
    await caches.foreignImage("a", load(1));
    await caches.foreignImage("b", load(2));
    await caches.foreignImage("a", load(9)); // a hit refreshes "a"
    await caches.foreignImage("c", load(3));
    expect(caches.foreignDigests).toEqual(["a", "c"]);
    expect(await caches.foreignImage("a", load(9))).toEqual(new Uint8Array([1]));
  });

  it("registry unreachable for a foreign image: a transient failure that keeps the run, and is not cached", async () => {
    const other = await otherBuild("build-foreign-2");
    const cell = await parkedCell();
    const bytes = await rewrite(cell.snapshot, { base: { kind: "image", digest: other.digest }, baseMemory: other.memory });
    const caches = new ImageCaches();
    const error = await restoreError(new SnapshotCodec(new DownRegistry(), { caches }).decode(bytes));
    expect(error.reason).toBe("base_unavailable");
    expect(restoreFailure(error)).toEqual({
      keepRun: true,
      message:
        "code mode run could not be restored right now (the image registry did not answer: registry object unreachable); it is still parked: call wait again later.",
    });
    const registry = new MemoryImageRegistry();
    await registry.put(other.record);
    expect(await resume(await new SnapshotCodec(registry, { caches }).decode(bytes), cell)).toBe("42");
  });

  it("a foreign image the registry no longer keeps (pruned): permanent, says so", async () => {
    const other = await otherBuild("build-foreign-3");
    const cell = await parkedCell();
    const bytes = await rewrite(cell.snapshot, { base: { kind: "image", digest: other.digest }, baseMemory: other.memory });
    const error = await restoreError(new SnapshotCodec(new MemoryImageRegistry(), { caches: new ImageCaches() }).decode(bytes));
    expect(error.reason).toBe("base_missing");
    expect(restoreFailure(error)).toEqual({
      keepRun: false,
      message: `code mode run could not be restored (the base image of the build that parked it (${other.digest.slice(0, 12)}…) is no longer kept); it cannot be resumed.`,
    });
    const unbound = await restoreError(new SnapshotCodec(null).decode(bytes));
    expect(unbound.reason).toBe("base_missing");
  });

  it("a registry image that does not match its digest is refused rather than used as a base", async () => {
    const other = await otherBuild("build-foreign-4");
    const impostor = await otherBuild("build-foreign-4-impostor");
    const registry = new MemoryImageRegistry();
    await registry.put({ ...impostor.record, digest: other.digest, prelude: other.record.prelude });
    const cell = await parkedCell();
    const bytes = await rewrite(cell.snapshot, { base: { kind: "image", digest: other.digest }, baseMemory: other.memory });
    const error = await restoreError(new SnapshotCodec(registry, { caches: new ImageCaches() }).decode(bytes));
    expect(error.reason).toBe("base_missing");
    expect(error.detail).toMatch(/does not match its digest/);
  });

  it("engine mismatch: a snapshot from another engine fails with a message saying the engine was upgraded", async () => {
    const cell = await parkedCell();
    const local = await pristineImage();
    const bytes = await rewrite(cell.snapshot, {
      base: { kind: "image", digest: local.digest },
      baseMemory: local.memory,
      engine: "quickjs-wasi 3.6.0 (quickjs 0.17.0, image 0123456789abcdef)",
    });
    const error = await restoreError(new SnapshotCodec(new MemoryImageRegistry()).decode(bytes));
    expect(error.reason).toBe("engine_upgraded");
    const { message, keepRun } = restoreFailure(error);
    expect(keepRun).toBe(false);
    expect(message).toBe(
      `code mode run could not be restored (the sandbox engine was upgraded since it was parked, from quickjs-wasi 3.6.0 (quickjs 0.17.0, image 0123456789abcdef) to ${(await engineImage()).id}, and a VM snapshot cannot move between engines); it cannot be resumed.`,
    );
  });

  it("unknown guest ABI: fails with a clear message naming the versions this build drives", async () => {
    const cell = await parkedCell();
    const local = await pristineImage();
    const abi = Math.max(...DRIVABLE_GUEST_ABI) + 1;
    const bytes = await rewrite(cell.snapshot, { base: { kind: "image", digest: local.digest }, baseMemory: local.memory, abi });
    const error = await restoreError(new SnapshotCodec(null).decode(bytes));
    expect(error.reason).toBe("unknown_abi");
    expect(restoreFailure(error).message).toBe(
      `code mode run could not be restored (it was parked with guest ABI version ${abi}, which this build cannot drive (it drives version ${DRIVABLE_GUEST_ABI.join(", ")})); it cannot be resumed.`,
    );
    // GuestVm refuses it too, should anything hand it such a snapshot.
    await expect(GuestVm.restore(cell.snapshot, cell.controlToken, LIMITS, guard(), yieldHost(), abi)).rejects.toThrow(/ABI version/);
  });

  it("format 1 snapshots (parked before this change) restore when the build is unchanged", async () => {
    const cell = await parkedCell();
    const bytes = await encodeFormat1(cell.snapshot);
    const header = await headerOf(bytes);
    expect(header).toMatchObject({ format: 1, abi: 1, engine: undefined, base: { kind: "image", digest: (await pristineImage()).digest } });
    const parked = await new SnapshotCodec(new MemoryImageRegistry()).decode(bytes);
    expect(sameMemory(parked.snapshot, cell.snapshot)).toBe(true);
    expect(await resume(parked, cell)).toBe("42");
  });

  it("format 1 snapshots of an earlier build fail permanently: that build never kept its image", async () => {
    const cell = await parkedCell();
    const image = await pristineImage();
    const saved = image.digest;
    let bytes: Uint8Array;
    image.digest = "f".repeat(64); // the earlier build, as far as format 1 can tell
    try {
      bytes = await encodeFormat1(cell.snapshot);
    } finally {
      image.digest = saved;
    }
    const error = await restoreError(new SnapshotCodec(new MemoryImageRegistry(), { caches: new ImageCaches() }).decode(bytes));
    expect(restoreFailure(error)).toEqual({
      keepRun: false,
      message:
        "code mode run could not be restored (it was parked by an earlier build (image ffffffffffff…) whose base image was not kept); it cannot be resumed.",
    });
  });

  it("unreadable bytes and unknown formats are corrupt, permanently", async () => {
    const codec = new SnapshotCodec(null);
    expect((await restoreError(codec.decode(new Uint8Array([1, 2, 3, 4])))).reason).toBe("corrupt");
    const cell = await parkedCell();
    const local = await pristineImage();
    const good = await rewrite(cell.snapshot, { base: { kind: "image", digest: local.digest }, baseMemory: local.memory });
    expect((await restoreError(codec.decode(good.slice(0, good.length - 200)))).reason).toBe("corrupt");
    const { compress } = await import("../../../src/snapshot-store");
    const header = new TextEncoder().encode(JSON.stringify({ v: 3, len: 4096 }));
    const raw = new Uint8Array(4 + header.length);
    new DataView(raw.buffer).setUint32(0, header.length, true);
    raw.set(header, 4);
    const future = await restoreError(codec.decode(await compress(raw)));
    expect(future.reason).toBe("corrupt");
    expect(future.detail).toMatch(/unknown snapshot format 3/);
  });
});
