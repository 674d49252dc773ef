import { env, evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/runtime";
import { GUEST_ABI_VERSION } from "../../src/runtime";
import {
  decodeSnapshot,
  IMAGE_PRUNE_AFTER_MS,
  isolateImageCaches,
  pristineImage,
  type ImageRecord,
  type ImageRegistry,
  type ImageRegistryRpc,
} from "../../src/snapshot-store";
import type { Snapshot } from "quickjs-wasi";
import { encodeFormat1, headerOf, otherBuild, rewrite } from "../support/snapshot-fixtures";
import { api, exec, expectHealthy, footprint, openTurn, parkOnClientTool, sessionId, sessionProbe, sessionStub, wait } from "./helpers";
import { setClock, setSessionEnv } from "./session-controls";

const images = (env as unknown as { PRISTINE_IMAGES: DurableObjectNamespace<ImageRegistryRpc> }).PRISTINE_IMAGES;
/** The registry object: its RPC, and the test entry's `alarmAt` (test/e2e/entry.ts). */
const registry = (name = "v1") =>
  images.get(images.idFromName(name)) as unknown as ImageRegistryRpc & {
    digests(): Promise<Array<{ digest: string; lastSeen: number }>>;
    alarmAt(): Promise<number | null>;
  };
const DAY = 86_400_000;

/** What the registry object holds (its `digests` RPC). */
function registryDigests(name = "v1"): Promise<Array<{ digest: string; lastSeen: number }>> {
  return registry(name).digests();
}

/** Replace a parked run's stored snapshot with what `make` writes (another build, engine or ABI). */
async function rewriteStored(session: string, runId: string, make: (snapshot: Snapshot) => Promise<Uint8Array>): Promise<void> {
  const probe = sessionProbe(session);
  const snapshot = await decodeSnapshot(await probe.parkedSnapshot(runId));
  await probe.replaceParkedSnapshot(runId, await make(snapshot));
}

async function storedHeader(session: string, runId: string) {
  return headerOf(await sessionProbe(session).parkedSnapshot(runId));
}

/**
 * The registry unreachable from this session object's next incarnation (called while it is not
 * running: it is built bound to a registry namespace whose object never answers), and the
 * isolate's memory of the registry cleared.
 */
function registryDown(session: string): void {
  const down: ImageRegistry = {
    touch: () => Promise.reject(new Error("registry object unreachable")),
    put: () => Promise.reject(new Error("registry object unreachable")),
    get: () => Promise.reject(new Error("registry object unreachable")),
  };
  setSessionEnv(session, { PRISTINE_IMAGES: { idFromName: () => ({}), get: () => down } });
  isolateImageCaches.confirmedAt.clear();
  isolateImageCaches.failedAt = undefined;
}

/** The real registry bound again for the session object's next incarnation (the caller evicts it). */
function registryUp(session: string): void {
  setSessionEnv(session, undefined);
}

async function deliver(session: string, turnId: string, callId: string, value: unknown) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId, value });
  expect(r.status).toBe(202);
}

describe("parked runs survive deploys", () => {
  it("a park registers this build's image in the registry object and stores only the delta against it", async () => {
    const session = sessionId();
    // Storage is per test here; forget what this isolate confirmed in earlier tests.
    isolateImageCaches.confirmedAt.clear();
    const { turnId, runId, callId } = await parkOnClientTool(session);
    const local = await pristineImage();
    expect(await storedHeader(session, runId)).toMatchObject({ format: 2, abi: GUEST_ABI_VERSION, base: { kind: "image", digest: local.digest } });
    expect((await registryDigests()).map((r) => r.digest)).toEqual([local.digest]);
    expect((await footprint(session)).storedBytes).toBeLessThan(16 * 1024);
    await deliver(session, turnId, callId, "Ada");
    expect(await wait(session, turnId, runId)).toMatchObject({ status: "completed", value: "Hello, Ada" });
  });

  it("a run parked by another build resumes after eviction with that build's image from the registry object", async () => {
    const session = sessionId();
    const { turnId, runId, callId } = await parkOnClientTool(session);
    const other = await otherBuild("e2e-other-build-1");
    await registry().put(other.record);
    await rewriteStored(session, runId, (s) => rewrite(s, { base: { kind: "image", digest: other.digest }, baseMemory: other.memory }));
    expect((await storedHeader(session, runId)).base).toEqual({ kind: "image", digest: other.digest });
    await evictDurableObject(sessionStub(session));
    await deliver(session, turnId, callId, "Ada");
    expect(await wait(session, turnId, runId)).toMatchObject({ status: "completed", value: "Hello, Ada" });
    // The base came from the registry (this build's own image would have corrupted the VM).
    expect(isolateImageCaches.foreignDigests).toContain(other.digest);
    expect((await footprint(session)).runs).toBe(0);
  });

  it("registry unavailable at park: the run still parks (self-contained), survives eviction, and wait completes", async () => {
    const session = sessionId();
    registryDown(session);
    try {
      const { turnId, runId, callId } = await parkOnClientTool(session);
      expect((await storedHeader(session, runId)).base).toEqual({ kind: "engine" });
      // A fresh object (the real registry bound again) needs nothing from the registry for it.
      registryUp(session);
      await evictDurableObject(sessionStub(session));
      await deliver(session, turnId, callId, "Grace");
      expect(await wait(session, turnId, runId)).toMatchObject({ status: "completed", value: "Hello, Grace" });
    } finally {
      isolateImageCaches.failedAt = undefined;
    }
  });

  it("registry unreachable when another build's run is restored: wait fails with internal_error, the run stays parked, a later wait resumes it", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await exec(session, turnId, "const n = 20; await yield_control(); return n + 22;");
    expect(r.status).toBe("waiting");
    const other = await otherBuild("e2e-other-build-2");
    await registry().put(other.record);
    await rewriteStored(session, r.runId, (s) => rewrite(s, { base: { kind: "image", digest: other.digest }, baseMemory: other.memory }));
    await evictDurableObject(sessionStub(session));
    registryDown(session);
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({
      status: "failed",
      code: "internal_error",
      error:
        "code mode run could not be restored right now (the image registry did not answer: registry object unreachable); it is still parked: call wait again later.",
    });
    expect((await footprint(session)).runs).toBe(1);
    registryUp(session);
    await evictDurableObject(sessionStub(session));
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: 42 });
  });

  it("engine mismatch: wait fails with internal_error saying the engine was upgraded, and the run is dropped", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await exec(session, turnId, "await yield_control(); return 1;");
    const local = await pristineImage();
    const oldEngine = "quickjs-wasi 3.6.0 (quickjs 0.17.0, image 0123456789abcdef)";
    await rewriteStored(session, r.runId, (s) =>
      rewrite(s, { base: { kind: "image", digest: local.digest }, baseMemory: local.memory, engine: oldEngine }),
    );
    const w = await wait(session, turnId, r.runId);
    expect(w.status).toBe("failed");
    expect(w.code).toBe("internal_error");
    expect(w.error).toMatch(
      /^code mode run could not be restored \(the sandbox engine was upgraded since it was parked, from quickjs-wasi 3\.6\.0 .* and a VM snapshot cannot move between engines\); it cannot be resumed\.$/,
    );
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    await expectHealthy(session, turnId);
  });

  it("unknown guest ABI: wait fails with internal_error naming the version, and the run is dropped", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const r = await exec(session, turnId, "await yield_control(); return 1;");
    const local = await pristineImage();
    await rewriteStored(session, r.runId, (s) => rewrite(s, { base: { kind: "image", digest: local.digest }, baseMemory: local.memory, abi: 99 }));
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "failed", code: "internal_error" });
    expect(w.error).toMatch(/^code mode run could not be restored \(it was parked with guest ABI version 99, which this build cannot drive/);
    expect((await footprint(session)).runs).toBe(0);
  });

  it("a run parked in format 1 (before this change) resumes when the build did not change", async () => {
    const session = sessionId();
    const { turnId, runId, callId } = await parkOnClientTool(session);
    await rewriteStored(session, runId, (s) => encodeFormat1(s));
    expect((await storedHeader(session, runId)).format).toBe(1);
    await evictDurableObject(sessionStub(session));
    await deliver(session, turnId, callId, "Ada");
    expect(await wait(session, turnId, runId)).toMatchObject({ status: "completed", value: "Hello, Ada" });
  });
});

describe("the image registry object", () => {
  const record = (digest: string): ImageRecord => ({
    digest,
    engine: "engine-x",
    prelude: "/* prelude */",
    image: new Uint8Array([1, 2, 3, digest.length]),
  });

  it("keeps images by digest and prunes those no build has confirmed for two days (alarm)", async () => {
    const stub = registry("prune-test");
    const t0 = Date.now();
    const clock = manualClock(t0);
    setClock(clock);
    await stub.put(record("a".repeat(64)));
    await stub.put(record("b".repeat(64)));
    expect(await stub.alarmAt()).toBe(t0 + IMAGE_PRUNE_AFTER_MS);
    expect(await stub.get("a".repeat(64))).toEqual(record("a".repeat(64)));
    expect(await stub.get("c".repeat(64))).toBeNull();

    clock.set(t0 + DAY);
    expect(await stub.touch("a".repeat(64))).toBe(true); // a build still parks against "a"
    expect(await stub.touch("c".repeat(64))).toBe(false);

    clock.set(t0 + IMAGE_PRUNE_AFTER_MS + 1);
    expect(await runDurableObjectAlarm(stub as unknown as DurableObjectStub)).toBe(true);
    expect((await registryDigests("prune-test")).map((r) => r.digest)).toEqual(["a".repeat(64)]);
    expect(await stub.get("b".repeat(64))).toBeNull();
    expect(await stub.alarmAt()).toBe(t0 + DAY + IMAGE_PRUNE_AFTER_MS);

    clock.set(t0 + DAY + IMAGE_PRUNE_AFTER_MS + 1);
    expect(await runDurableObjectAlarm(stub as unknown as DurableObjectStub)).toBe(true);
    expect(await registryDigests("prune-test")).toEqual([]);
    expect(await stub.touch("a".repeat(64))).toBe(false);
    expect(await stub.alarmAt()).toBeNull();
  });

  it("a second put of a digest keeps the first image and only refreshes it", async () => {
    const stub = registry("put-twice");
    await stub.put(record("d".repeat(64)));
    await stub.put({ ...record("d".repeat(64)), image: new Uint8Array([9]) });
    expect((await stub.get("d".repeat(64)))?.image).toEqual(new Uint8Array([1, 2, 3, 64]));
  });
});
