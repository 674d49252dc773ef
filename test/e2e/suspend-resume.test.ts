import { abortAllDurableObjects, evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/runtime";
import {
  TOKEN_B,
  api,
  cellRunning,
  exec,
  expectHealthy,
  footprint,
  freshTurn,
  openTurn,
  parkOnClientTool,
  sessionId,
  sessionStub,
  sessionProbe,
  settleRun,
  sleep,
  untilInSession,
  wait,
} from "./helpers";
import { setClock } from "./session-controls";

const UNAVAILABLE = "code mode run is unavailable or expired.";
const OTHER_SESSION = "code mode run belongs to a different session.";

// Seed E2E 12-15.
describe("suspension and resume", () => {
  it("a nested call that resolves after exec returns waiting is delivered by wait, with output after restore", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(
      session,
      turnId,
      "text('before'); const v = await echo({ value: 'slow', delayMs: 600 }); text('after ' + v); return v + '!';",
    );
    expect(r).toMatchObject({ status: "waiting", reason: "pending_tools", output: [{ type: "text", text: "before" }] });
    expect(r.runId).toMatch(/^cm_/);
    expect(r.pendingToolCalls).toEqual([{ callId: expect.stringMatching(/^call_/), tool: "echo", input: { value: "slow", delayMs: 600 } }]);
    expect((await footprint(session)).runs).toBe(1);
    const w = await settleRun(session, turnId, await wait(session, turnId, r.runId));
    expect(w).toMatchObject({ status: "completed", value: "slow!", output: [{ type: "text", text: "after slow" }] });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    // Settled runs cannot be resumed again.
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "failed", code: "invalid_input", error: UNAVAILABLE });
  });

  it("fast tools auto-drain inside one exec", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(
      session,
      turnId,
      "const a = await echo({ value: 1 }); const b = await echo({ value: 2 }); const c = await shipping_list({}); return a + b + c.length;",
    );
    expect(r).toMatchObject({ status: "completed", value: 9 });
  });

  it("Promise.all of three slow tools survives a park/resume", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(session, turnId, "return await Promise.all([1, 2, 3].map((n) => echo({ value: n * 10, delayMs: 400 + n * 50 })));");
    expect(r.status).toBe("waiting");
    expect(r.pendingToolCalls).toHaveLength(3);
    const w = await settleRun(session, turnId, await wait(session, turnId, r.runId));
    expect(w).toMatchObject({ status: "completed", value: [10, 20, 30] });
  });

  it("a timer set before parking fires after wait", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "const fired = new Promise((res) => setTimeout(res, 200)); await yield_control(); await fired; return 'timer fired';",
    );
    expect(r).toMatchObject({ status: "waiting", reason: "yield" });
    expect(r.pendingToolCalls).toBeUndefined();
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "timer fired" });
  });

  it("clearTimeout cancels a timer created before an earlier suspension", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `globalThis.fired = false;
       const t = setTimeout(() => { globalThis.fired = true; }, 350);
       await yield_control('check in');
       clearTimeout(t);
       await new Promise((res) => setTimeout(res, 450));
       return globalThis.fired;`,
    );
    expect(r).toMatchObject({ status: "waiting", reason: "yield" });
    const w = await settleRun(session, turnId, await wait(session, turnId, r.runId));
    expect(w).toMatchObject({ status: "completed", value: false });
  });

  it("yield_control parks with reason yield and continues the same program", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "let n = 41; await yield_control('progress'); n++; return n;");
    expect(r).toMatchObject({ status: "waiting", reason: "yield" });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: 42 });
  });

  it("handlers attached after a suspension still handle their original promises", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "const p = shipping_get({ id: 'nope' }); await yield_control(); try { await p; return 'no'; } catch (e) { return 'handled: ' + e.message; }",
    );
    expect(r.status).toBe("waiting");
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "handled: shipment nope not found" });
  });

  it("the output budget is shared across all waits of one cell", async () => {
    const { session, turnId } = await freshTurn({ agentId: "parktight" });
    const r = await exec(session, turnId, "text('a'.repeat(1500)); await yield_control(); text('b'.repeat(1500)); return 'done';");
    expect(r.status).toBe("waiting");
    expect(r.output).toEqual([{ type: "text", text: "a".repeat(1500) }]);
    const w = await wait(session, turnId, r.runId);
    expect(w.status).toBe("completed");
    // With a fresh budget per wait the 1500 b's would fit whole; shared, they cannot.
    expect(JSON.stringify(w.output)).not.toContain("b".repeat(1500));
    expect(w.output.at(-1)).toMatchObject({ type: "json", value: { truncated: true } });
  });

  it("wait on an unknown, malformed or other-session runId fails with the seed's messages", async () => {
    const a = await freshTurn();
    const parked = await exec(a.session, a.turnId, "await yield_control(); return 1");
    expect(await wait(a.session, a.turnId, "nope")).toMatchObject({ status: "failed", code: "invalid_input", error: UNAVAILABLE });
    expect(await wait(a.session, a.turnId, 42)).toMatchObject({ status: "failed", code: "invalid_input" });
    const b = await freshTurn();
    expect(await wait(b.session, b.turnId, parked.runId)).toMatchObject({ status: "failed", code: "invalid_input", error: OTHER_SESSION });
    // Another turn of the same session is another run scope.
    const otherTurn = await openTurn(a.session);
    expect(await wait(a.session, otherTurn, parked.runId)).toMatchObject({
      status: "failed",
      code: "invalid_input",
      error: "code mode run belongs to a different turn.",
    });
    // The parked run is untouched by those attempts.
    expect(await wait(a.session, a.turnId, parked.runId)).toMatchObject({ status: "completed", value: 1 });
  });

  it("another tenant cannot wait on or deliver to a parked run", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "return await ask_user({ q: 'x' })");
    const byB = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: r.runId }, TOKEN_B);
    expect(byB.status).toBe(404);
    const deliverB = await api(
      "POST",
      `/v1/sessions/${session}/turns/${turnId}/client-results`,
      { callId: r.pendingToolCalls[0].callId, value: 1 },
      TOKEN_B,
    );
    expect(deliverB.status).toBe(404);
    expect((await footprint(session)).results).toBe(0);
  });

  it("concurrent waits on one runId: one resumes, the other fails", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(session, turnId, "return await echo({ value: 'x', delayMs: 500 })");
    expect(r.status).toBe("waiting");
    const [w1, w2] = await Promise.all([wait(session, turnId, r.runId), wait(session, turnId, r.runId)]);
    const failedOne = [w1, w2].filter((w) => w.status === "failed");
    expect(failedOne).toHaveLength(1);
    expect(failedOne[0]).toMatchObject({ code: "invalid_input", error: "a wait is already in flight for this code mode run." });
  });

  it("a snapshot larger than maxSnapshotBytes fails with snapshot_limit_exceeded and stores nothing", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tinysnap" });
    const r = await exec(session, turnId, "await yield_control(); return 1;");
    expect(r).toMatchObject({ status: "failed", code: "snapshot_limit_exceeded" });
    expect(r.error).toMatch(/maxSnapshotBytes \(1024\)/);
    expect((await footprint(session)).runs).toBe(0);
  });

  it("a snapshot over 2 MB is stored in chunks and restored bit-exact", async () => {
    const { session, turnId } = await freshTurn({ agentId: "bigsnap" });
    const r = await exec(
      session,
      turnId,
      `let x = 2463534242; const parts = [];
       for (let i = 0; i < 400000; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; parts.push((x >>> 0).toString(36)); }
       globalThis.data = parts.join(',');
       const sum = (s) => { let h = 0; for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0; return h; };
       const before = sum(globalThis.data);
       await yield_control();
       return { same: sum(globalThis.data) === before, length: globalThis.data.length };`,
    );
    expect(r.status).toBe("waiting");
    const fp = await footprint(session);
    expect(fp.storedBytes).toBeGreaterThan(2 * 1024 * 1024);
    expect(fp.chunks).toBeGreaterThanOrEqual(3);
    const w = await wait(session, turnId, r.runId);
    expect(w.status).toBe("completed");
    expect(w.value.same).toBe(true);
    expect(w.value.length).toBeGreaterThan(2_000_000);
  });

  it("two yields at once both settle after wait", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "await Promise.all([yield_control('a'), yield_control('b')]); return 'both';");
    expect(r).toMatchObject({ status: "waiting", reason: "yield" });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "both" });
  });

  it("parked state too large for one row fails with snapshot_limit_exceeded and stores nothing", async () => {
    const { session, turnId } = await freshTurn({ agentId: "bigsnap" });
    const r = await exec(
      session,
      turnId,
      `const calls = [];
       for (let i = 0; i < 3; i++) { calls.push(echo({ value: 'z'.repeat(900000) + i, delayMs: 20000 })); await new Promise((res) => setTimeout(res, 0)); }
       return await Promise.all(calls);`,
    );
    expect(r).toMatchObject({ status: "failed", code: "snapshot_limit_exceeded" });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    await expectHealthy(session, turnId);
  });
});

describe("client tools, eviction and teardown", () => {
  it("done-when: a client tool parks, the object is evicted, the result arrives, wait completes the original program", async () => {
    const session = sessionId();
    const { turnId, result: r } = await parkOnClientTool(session);
    expect(r.pendingToolCalls).toEqual([{ callId: expect.any(String), tool: "ask_user", input: { question: "Name?" } }]);
    await evictDurableObject(sessionStub(session));
    const delivered = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, {
      callId: r.pendingToolCalls[0].callId,
      value: "Ada",
    });
    expect(delivered.status).toBe(202);
    await evictDurableObject(sessionStub(session));
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "Hello, Ada" });
    expect((await footprint(session)).runs).toBe(0);
  });

  it("wait before the client result arrives stays waiting without losing the run", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "return await ask_user({})");
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "waiting", runId: r.runId, pendingToolCalls: r.pendingToolCalls });
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: r.pendingToolCalls[0].callId, value: { ok: 1 } });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: { ok: 1 } });
  });

  it("a client error becomes a catchable guest Error", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "try { await ask_user({}); } catch (e) { return 'caught: ' + e.message; }");
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, {
      callId: r.pendingToolCalls[0].callId,
      error: { message: "user declined" },
    });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "caught: user declined" });
  });

  it("client results for an unknown call or twice are rejected and change nothing", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "return await ask_user({})");
    const path = `/v1/sessions/${session}/turns/${turnId}/client-results`;
    expect((await api("POST", path, { callId: "call_999_deadbeef", value: 1 })).status).toBe(404);
    expect((await api("POST", path, { callId: r.pendingToolCalls[0].callId, value: 1 })).status).toBe(202);
    const twice = await api("POST", path, { callId: r.pendingToolCalls[0].callId, value: 2 });
    expect(twice.status).toBe(409);
    expect(twice.json.error.code).toBe("conflict");
    expect((await api("POST", path, { callId: "x", value: 1, error: { message: "both" } })).status).toBe(400);
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: 1 });
  });

  it("eviction while a host call is in flight fails the run cleanly on the next wait", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(session, turnId, "return await echo({ value: 1, delayMs: 5000 })");
    expect(r.status).toBe("waiting");
    // Reset the instance mid-call (eviction would wait for the in-flight timer to drain).
    await abortAllDurableObjects();
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "failed", code: "internal_error" });
    expect(w.error).toMatch(/lost 1 nested tool call\(s\) \(echo\)/);
    expect((await footprint(session)).runs).toBe(0);
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "failed", error: UNAVAILABLE });
  });

  it("results that settle while parked are stored durably and survive eviction", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(session, turnId, "const v = await echo({ value: 'kept', delayMs: 400 }); return v;");
    expect(r.status).toBe("waiting");
    await sleep(600);
    expect((await footprint(session)).results).toBe(1);
    await evictDurableObject(sessionStub(session));
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "kept" });
  });

  it("DELETE drops parked snapshots; the runId can never be resumed", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r1 = await exec(session, turnId, "await yield_control(); return 1");
    const r2 = await exec(
      session,
      turnId,
      "await echo({ value: 2, delayMs: 600 }); await notes_write({ key: 'after-delete', text: 'x' }); return 2;",
    );
    expect(r2.status).toBe("waiting");
    expect((await footprint(session)).runs).toBe(2);
    const del = await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    expect(del.status).toBe(200);
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: r1.runId })).status).toBe(404);
    // The pending echo was cancelled and the program never continued past it.
    await sleep(800);
    const other = await openTurn(session);
    expect((await exec(session, other, "return await notes_read({ key: 'after-delete' })")).value).toEqual([]);
  });

  it("a wait observing teardown returns failed with code aborted and telemetry", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(session, turnId, "return await echo({ value: 1, delayMs: 3000 })");
    const slowWait = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: r.runId });
    await untilInSession(session, cellRunning, "the wait is running");
    await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    const w = await slowWait;
    expect(w.status).toBe(200);
    expect(w.json).toMatchObject({ status: "failed", code: "aborted" });
    expect(w.json.telemetry.controlTools).toEqual(["exec", "wait"]);
    expect((await footprint(session)).runs).toBe(0);
  });

  it("a cell that times out in CPU after restore leaves no storage behind", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(session, turnId, "await yield_control(); while (true) {}");
    expect(r.status).toBe("waiting");
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "failed", code: "timeout" });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
  });

  it("a timer survives eviction: it is re-armed from its due time after restore", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "const t = new Promise((res) => setTimeout(res, 300)); await yield_control(); await t; return 'after eviction';",
    );
    expect(r.status).toBe("waiting");
    await evictDurableObject(sessionStub(session));
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "after eviction" });
  });

  it("a corrupt snapshot fails the wait cleanly and drops the run", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "await yield_control(); return 1");
    await sessionProbe(session).storageWrite("UPDATE run_chunks SET data = ? WHERE seq = 0", new Uint8Array([1, 2, 3, 4]).buffer);
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({
      status: "failed",
      code: "internal_error",
      error: "code mode run could not be restored (its stored snapshot is missing or incomplete); it cannot be resumed.",
    });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    await expectHealthy(session, turnId);
  });

  it("a snapshot whose bytes are garbled (same length) fails the wait as corrupt and drops the run", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "await yield_control(); return 1");
    const [row] = await sessionProbe(session).storageRows<{ data: ArrayBuffer }>("SELECT data FROM run_chunks WHERE seq = 0");
    await sessionProbe(session).storageWrite("UPDATE run_chunks SET data = ? WHERE seq = 0", new Uint8Array(row!.data.byteLength).fill(7).buffer);
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({
      status: "failed",
      code: "internal_error",
      error:
        "code mode run could not be restored (the snapshot is corrupt: snapshot bytes are not readable (not gzip or truncated)); it cannot be resumed.",
    });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
  });

  it("re-parking on wait past maxSnapshotBytes fails with snapshot_limit_exceeded", async () => {
    const { session, turnId } = await freshTurn({ agentId: "snapcap" });
    const r = await exec(
      session,
      turnId,
      "await yield_control(); globalThis.big = 'x'.repeat(3 * 1024 * 1024) + Math.random(); await yield_control(); return 1;",
    );
    expect(r.status).toBe("waiting");
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "failed", code: "snapshot_limit_exceeded" });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
  });

  it("a wait queued behind a busy cell observes DELETE as aborted", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const parked = await exec(session, turnId, "await yield_control(); return 1");
    const busy = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return await echo({ value: 1, delayMs: 250 })" });
    await sleep(30);
    const queued = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: parked.runId });
    await sleep(30);
    await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`);
    await busy;
    const w = await queued;
    expect(w.status).toBe(200);
    expect(w.json).toMatchObject({ status: "failed", code: "aborted" });
  });
});

describe("TTL and the 64-slot cap", () => {
  it("expiry is enforced by the alarm (injected clock) and storage is emptied", async () => {
    const session = sessionId();
    const clock = manualClock(Date.now());
    await openTurn(session); // create the object
    setClock(clock);
    const turnId = await openTurn(session, { agentId: "park" });
    const r = await exec(session, turnId, "await yield_control(); return 1");
    expect(r.status).toBe("waiting");
    clock.advance(59_000);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect((await footprint(session)).runs).toBe(1);
    clock.advance(2_000);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "failed", code: "invalid_input", error: UNAVAILABLE });
  });

  it("an expired run is unavailable on wait even before the alarm runs", async () => {
    const session = sessionId();
    const clock = manualClock(Date.now());
    await openTurn(session);
    setClock(clock);
    const turnId = await openTurn(session, { agentId: "park" });
    const r = await exec(session, turnId, "await yield_control(); return 1");
    clock.advance(61_000);
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "failed", error: UNAVAILABLE });
    expect((await footprint(session)).runs).toBe(0);
  });

  it("64 parked runs fill the cap; the 65th is refused; one freed makes room", async () => {
    const { session, turnId } = await freshTurn();
    const runIds: string[] = [];
    for (let i = 0; i < 64; i++) {
      const r = await exec(session, turnId, `await yield_control(); return ${i};`);
      expect(r.status).toBe("waiting");
      runIds.push(r.runId);
    }
    const refused = await exec(session, turnId, "await yield_control(); return 'x';");
    expect(refused).toMatchObject({ status: "failed", code: "invalid_input", error: "too many suspended code mode runs." });
    // An exec that completes without suspending holds no slot.
    expect(await exec(session, turnId, "return 'no slot needed'")).toMatchObject({ status: "completed" });
    expect(await wait(session, turnId, runIds[7])).toMatchObject({ status: "completed", value: 7 });
    const accepted = await exec(session, turnId, "await yield_control(); return 'y';");
    expect(accepted.status).toBe("waiting");
    expect((await footprint(session)).runs).toBe(64);
  }, 60_000);
});
