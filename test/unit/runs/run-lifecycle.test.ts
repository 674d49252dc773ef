import { describe, expect, it } from "vitest";
import type { BridgeHandlers } from "../../../src/bridge";
import { runExec, type CellEnvironment } from "../../../src/cell";
import type { CodeModeResult } from "../../../src/code-mode";
import { MAX_SUSPENDED_RUNS } from "../../../src/limits";
import { RUN_INTERRUPTED, RUN_UNAVAILABLE, WAIT_IN_FLIGHT } from "../../../src/runs/messages";
import { RunLifecycle } from "../../../src/runs/run-lifecycle";
import type { RunCodec, RunDeps } from "../../../src/runs/run-context";
import { manualClock, MemoryLedger, VmPool } from "../../../src/runtime";
import { SnapshotCodec, type ParkedRunState } from "../../../src/snapshot-store";
import type { TurnSpec } from "../../../src/turns";
import { InMemoryRunStore } from "../../support/in-memory-session";

const OPTIONS = {
  enabled: true,
  runtime: "quickjs-wasi",
  mode: "only",
  languages: ["javascript", "typescript"],
  timeoutMs: 2000,
  memoryLimitBytes: 16 << 20,
  maxOutputBytes: 65536,
  maxSnapshotBytes: 10 << 20,
  maxPendingToolCalls: 16,
  snapshotTtlSeconds: 60,
  searchDefaultLimit: 8,
  maxSearchLimit: 50,
} as const;

const SPEC = { turnId: "t1", tenantId: "tenant", sessionId: "s1", options: OPTIONS } as unknown as TurnSpec;

/** One test's world: a lifecycle over the in-memory store, a real VM pool, `ask` as the only (client) tool. */
function world(opts: { codec?: RunCodec; ledger?: MemoryLedger } = {}) {
  const clock = manualClock(1_000_000);
  const store = new InMemoryRunStore();
  const ledger = opts.ledger ?? new MemoryLedger({ budgetBytes: 64 << 20 });
  const pool = new VmPool(ledger);
  const alarms: number[] = [];
  const deps: RunDeps = {
    store,
    codec: opts.codec ?? new SnapshotCodec(null),
    sessionTag: () => "0123456789ab",
    now: () => clock.now(),
    transaction: (fn) => fn(),
    scheduleExpiry: (at) => void alarms.push(at),
  };
  const handlers: Omit<BridgeHandlers, "output"> = {
    call: async () => ({ ok: true, text: "1" }),
    isClientTool: (tool) => tool === "ask",
    clientCalled: () => undefined,
    toolName: (c) => c,
    search: () => ({ ok: true, text: "[]" }),
    describe: () => ({ ok: false, message: "no" }),
  };
  const meta = [{ callableName: "ask", toolName: "ask", description: "ask", source: "client", input: "unknown" }];
  const env = (signal = new AbortController().signal): CellEnvironment => ({
    options: OPTIONS as unknown as CellEnvironment["options"],
    clock,
    signal,
    vms: { pool, owner: "owner-1" },
    tools: { metadataJson: JSON.stringify(meta), namesJson: JSON.stringify(["ask"]) },
    handlers,
    telemetry: () => ({}) as CodeModeResult["telemetry"],
  });
  const runs = new RunLifecycle(deps);
  const exec = async (code: string) => runs.finish(SPEC, await runExec({ code }, env()), env(), { restartSafe: false });
  const wait = async (runId: string) => {
    const c = runs.claim(SPEC, { runId });
    if (!c.ok) return { status: "failed", error: c.message } as CodeModeResult;
    return runs.resume(SPEC, runId, () => env());
  };
  return { clock, store, ledger, pool, runs, deps, alarms, env, exec, wait };
}

const askCell = "return 'got ' + await ask({ q: 1 })";

describe("RunLifecycle over an in-memory store", () => {
  it("parks a cell, stores it, resumes it with a delivered client result, and forgets it", async () => {
    const w = world();
    const r = await w.exec(askCell);
    expect(r).toMatchObject({ status: "waiting", reason: "pending_tools", pendingToolCalls: [{ tool: "ask", input: { q: 1 } }] });
    if (r.status !== "waiting") return;
    expect(w.store.count()).toBe(1);
    expect(w.alarms).toEqual([w.clock.now() + 60_000]);
    const callId = r.pendingToolCalls![0]!.callId;
    expect(w.runs.deliverClientResult("t1", callId, { ok: true, text: '"yes"' })).toEqual({ ok: true });
    expect(w.runs.deliverClientResult("t1", callId, { ok: true, text: '"again"' })).toMatchObject({ ok: false, reason: "already_delivered" });
    expect(w.runs.deliverClientResult("t1", "call_nope", { ok: true, text: "1" })).toMatchObject({ ok: false, reason: "unknown_call" });
    expect(await w.wait(r.runId)).toMatchObject({ status: "completed", value: "got yes" });
    expect(w.store.count()).toBe(0);
    expect(w.store.stored.size).toBe(0);
    expect(await w.wait(r.runId)).toMatchObject({ status: "failed", error: RUN_UNAVAILABLE });
  });

  it("refuses a 65th parked run before storing anything, and the cell's VM is given back", async () => {
    const w = world();
    for (let i = 0; i < MAX_SUSPENDED_RUNS; i++)
      w.store.put({ runId: `cm_x${i}`, turnId: "t0", expiresAt: Infinity } as unknown as ParkedRunState, new Uint8Array(1));
    const r = await w.exec(askCell);
    expect(r).toMatchObject({ status: "failed", code: "invalid_input", error: "too many suspended code mode runs." });
    expect(w.store.count()).toBe(MAX_SUSPENDED_RUNS);
    expect(w.ledger.reservedBytes).toBe(w.pool.idle.bytes); // at most the spare and setup images
  });

  it("a snapshot that cannot be encoded fails the cell as internal_error through the one park exit", async () => {
    const codec: RunCodec = { encode: async () => Promise.reject(new Error("disk full")), decode: async () => Promise.reject(new Error("never")) };
    const w = world({ codec });
    const r = await w.exec(askCell);
    expect(r).toMatchObject({ status: "failed", code: "internal_error", error: "the code mode VM could not be snapshotted" });
    expect(w.store.count()).toBe(0);
  });

  it("a second concurrent wait for one run fails at once; the first still completes", async () => {
    const w = world();
    const r = await w.exec("await yield_control(); return 7");
    if (r.status !== "waiting") throw new Error("expected waiting");
    expect(w.runs.claim(SPEC, { runId: r.runId })).toEqual({ ok: true, runId: r.runId });
    expect(w.runs.claim(SPEC, { runId: r.runId })).toEqual({ ok: false, message: WAIT_IN_FLIGHT });
    expect(await w.runs.resume(SPEC, r.runId, () => w.env())).toMatchObject({ status: "completed", value: 7 });
  });

  it("a run whose resume was cut off midway is never replayed", async () => {
    const w = world();
    const r = await w.exec("await yield_control(); return 7");
    if (r.status !== "waiting") throw new Error("expected waiting");
    w.store.markResuming(r.runId);
    expect(w.runs.claim(SPEC, { runId: r.runId })).toEqual({ ok: false, message: RUN_INTERRUPTED, code: "internal_error" });
    expect(w.store.count()).toBe(0);
  });

  it("a decode failure the registry may recover from keeps the run parked; a corrupt one drops it", async () => {
    const real = new SnapshotCodec(null);
    let mode: "offline" | "corrupt" = "offline";
    const { SnapshotRestoreError } = await import("../../../src/snapshot-store");
    const codec: RunCodec = {
      encode: (s, abi) => real.encode(s, abi),
      decode: async () => {
        throw mode === "offline"
          ? new SnapshotRestoreError("base_unavailable", "the image registry did not answer")
          : new SnapshotRestoreError("corrupt", "bad bytes");
      },
    };
    const w = world({ codec });
    const r = await w.exec("await yield_control(); return 7");
    if (r.status !== "waiting") throw new Error("expected waiting");
    expect(await w.wait(r.runId)).toMatchObject({ status: "failed", code: "internal_error" });
    expect(w.store.count()).toBe(1);
    mode = "corrupt";
    expect(await w.wait(r.runId)).toMatchObject({ status: "failed", code: "internal_error" });
    expect(w.store.count()).toBe(0);
  });

  it("expiry drops runs past their TTL and never re-arms in the past", async () => {
    const w = world();
    const a = await w.exec("await yield_control(); return 1");
    w.clock.advance(30_000);
    const b = await w.exec("await yield_control(); return 2");
    if (a.status !== "waiting" || b.status !== "waiting") throw new Error("expected waiting");
    w.clock.advance(31_000);
    w.alarms.length = 0;
    expect(w.runs.expire()).toBe(1);
    expect(w.store.state(a.runId)).toBeUndefined();
    expect(w.store.state(b.runId)).toBeDefined();
    expect(w.alarms).toEqual([w.store.state(b.runId)!.expiresAt]);
    w.clock.advance(60_000);
    expect(w.runs.expire()).toBe(1);
    expect(w.store.count()).toBe(0);
  });
});
