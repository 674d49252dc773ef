import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionLimits } from "../../src/config";
import { manualClock } from "../../src/runtime";
import { api, exec, footprint, openTurn, sessionId, sessionProbe, sessionStub, sleep, TOKEN_B, wait } from "./helpers";
import { setClock, setLimits } from "./session-controls";
import { chat, rows, script, user } from "./chat-helpers";

const UNAVAILABLE = "code mode run is unavailable or expired.";

/** Everything the session object's storage holds: SQL tables, KV keys, the alarm. */
async function storageOf(session: string, tenant = "tenant-a") {
  const probe = sessionProbe(session, tenant);
  return {
    tables: (await probe.storageRows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name),
    kv: await probe.storageKeys(),
    alarm: await probe.storageAlarm(),
  };
}

const EMPTY = { tables: [], kv: [], alarm: null };

/** A manual clock and small limits for the session objects (until the test ends), before the session stores anything. */
function prepare(limits: Partial<SessionLimits>) {
  const clock = manualClock(Date.now());
  setClock(clock);
  setLimits(limits);
  return clock;
}

const alarmOf = (session: string) => sessionProbe(session).storageAlarm();

describe("DELETE /v1/sessions/:sessionId", () => {
  it("removes turns, parked runs, tool data, meta and the alarm: the object's storage is empty", async () => {
    const session = sessionId();
    const a = await openTurn(session);
    const b = await openTurn(session, { agentId: "park" });
    expect(await exec(session, a, "await notes_write({ key: 'k1', text: 'x'.repeat(1000) }); return 1")).toMatchObject({ status: "completed" });
    const parked = await exec(session, b, "await yield_control(); return 2");
    expect(parked.status).toBe("waiting");
    const before = await storageOf(session);
    const sizeBefore = await sessionProbe(session).databaseSize();
    expect(before.tables).toEqual(expect.arrayContaining(["turns", "runs", "run_chunks", "session_meta"]));
    expect(before.kv).toEqual(["tool:note:k1"]);
    expect(before.alarm).not.toBeNull();

    const del = await api("DELETE", `/v1/sessions/${session}`);
    expect(del).toMatchObject({ status: 200, json: { deleted: true } });
    expect(del.json).toEqual({ deleted: true });
    expect(await storageOf(session)).toEqual(EMPTY);
    // One empty page is what an empty database measures.
    expect(await sessionProbe(session).databaseSize()).toBeLessThan(sizeBefore / 10);

    // Nothing is left to address; a second DELETE finds nothing.
    expect((await api("POST", `/v1/sessions/${session}/turns/${a}/tools/exec`, { code: "return 1" })).status).toBe(404);
    expect(await api("DELETE", `/v1/sessions/${session}`)).toMatchObject({ status: 404, json: { error: { code: "not_found" } } });
  });

  it("an unknown session is 404 and requests naming it leave no database behind", async () => {
    const session = sessionId();
    expect(await api("DELETE", `/v1/sessions/${session}`)).toMatchObject({
      status: 404,
      json: { error: { code: "not_found", message: "unknown session" } },
    });
    expect((await api("POST", `/v1/sessions/${session}/turns/00000000-0000-0000-0000-000000000000/tools/exec`, { code: "return 1" })).status).toBe(
      404,
    );
    expect((await api("DELETE", `/v1/sessions/${session}/turns/00000000-0000-0000-0000-000000000000`)).status).toBe(404);
    expect(await storageOf(session)).toEqual(EMPTY);
  });

  it("another tenant's DELETE is 404 and the session stays intact", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    expect(await api("DELETE", `/v1/sessions/${session}`, undefined, TOKEN_B)).toMatchObject({ status: 404, json: { error: { code: "not_found" } } });
    expect(await exec(session, turnId, "return 40 + 2")).toMatchObject({ status: "completed", value: 42 });
  });

  it("drops a parked run: a later wait for it fails with the seed's unavailable message", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const parked = await exec(session, turnId, "await yield_control(); return 'never'");
    expect(parked.status).toBe("waiting");
    expect((await footprint(session)).runs).toBe(1);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
    // The old turn went with the session.
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: parked.runId })).status).toBe(404);
    // The same session id starts over empty; the old run id is not resumable there.
    const next = await openTurn(session);
    expect(await wait(session, next, parked.runId)).toMatchObject({ status: "failed", code: "invalid_input", error: UNAVAILABLE });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
  });

  it("cancels an active cell first (it fails with aborted), and a queued wait observes the teardown", async () => {
    const session = sessionId();
    const turnId = await openTurn(session);
    const parked = await exec(session, turnId, "await yield_control(); return 1");
    const busy = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return await echo({ value: 1, delayMs: 5000 })" });
    await sleep(100);
    const queued = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: parked.runId });
    await sleep(30);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
    expect(await busy).toMatchObject({ status: 200, json: { status: "failed", code: "aborted" } });
    expect(await queued).toMatchObject({ status: 200, json: { status: "failed", code: "aborted" } });
    expect(await storageOf(session)).toEqual(EMPTY);
  });

  it("the session id can be used again: a new, empty session without the old tool data", async () => {
    const session = sessionId();
    const first = await openTurn(session);
    await exec(session, first, "await notes_write({ key: 'old', text: 'kept?' }); return 1");
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
    const turnId = await openTurn(session);
    expect(await exec(session, turnId, "return await notes_read({ key: 'old' })")).toMatchObject({ status: "completed", value: [] });
    expect((await sessionProbe(session).storageUsage()).turns).toBe(1);
  });
});

describe("idle expiry (alarm, injected clock)", () => {
  it("a turn idle for turnIdleSeconds is deleted; activity keeps another; tool data stays with the session", async () => {
    const session = sessionId();
    const clock = prepare({ turnIdleSeconds: 60, sessionIdleSeconds: 3600 });
    const idle = await openTurn(session, { agentId: "park" });
    const kept = await openTurn(session);
    expect(await exec(session, idle, "await notes_write({ key: 'n', text: 'from the idle turn' }); return 1")).toMatchObject({ status: "completed" });
    clock.advance(40_000);
    expect(await exec(session, kept, "return 'still here'")).toMatchObject({ status: "completed" });
    // Not due yet: nothing changes.
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect((await sessionProbe(session).storageUsage()).turns).toBe(2);

    clock.advance(30_000); // idle turn: 70 s without a call (> 60 s + 6 s slack); kept: 30 s
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect((await api("POST", `/v1/sessions/${session}/turns/${idle}/tools/exec`, { code: "return 1" })).status).toBe(404);
    expect(await exec(session, kept, "return await notes_read({ key: 'n' })")).toMatchObject({
      status: "completed",
      value: [{ key: "n", text: "from the idle turn" }],
    });
    // Re-armed for the kept turn's deadline (last call at +40 s, 60 s idle, 6 s slack: +106 s), not in the past.
    expect(await alarmOf(session)).toBe(clock.now() + 36_000);
  });

  it("activity written in a step that rolls back is read from SQL again: the next call writes it", async () => {
    const session = sessionId();
    const clock = prepare({ turnIdleSeconds: 60, sessionIdleSeconds: 3600 }); // a turn's activity is rewritten after 6 s
    const s = await script([
      { toolCalls: [{ id: "x1", name: "exec", input: { code: "return await echo({ value: 1, delayMs: 600 })" } }] },
      { toolCalls: [{ id: "x2", name: "exec", input: { code: "return 2" } }] },
      { text: "done" },
    ]);
    await openTurn(session); // the session's tables exist
    const pending = chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
    // The first call runs (its nested call sleeps 600 ms).
    for (let i = 0; i < 200 && (await rows(session, "SELECT 1 FROM trajectory WHERE kind = 'outer_start'")).length === 0; i++) await sleep(10);
    const opened = clock.now();
    clock.advance(7_000);
    // Still to come: the nested call's charge, the first result's step, then the second reply's step, whose
    // call starts (its turn's activity written, 7 s later) and whose charge fails: the step rolls back.
    await sessionProbe(session).failNextStatement("UPDATE turns SET stored_bytes", "SQLITE_IOERR: disk I/O error", 2);
    const r = await pending;
    expect(r.json.error?.code).toBe("internal_error");
    const turnId = r.json.turnId as string;
    const active = async () => (await rows<{ t: number }>(session, `SELECT last_active_at AS t FROM turns WHERE turn_id = '${turnId}'`))[0]!.t;
    expect(await active()).toBe(opened);
    // The next call on the turn at the same time: what the rolled-back step wrote is not taken as written.
    expect(await exec(session, turnId, "return 3")).toMatchObject({ status: "completed", value: 3 });
    expect(await active()).toBe(clock.now());
  });

  it("a parked run that is still valid keeps its turn until the run expires", async () => {
    const session = sessionId();
    const clock = prepare({ turnIdleSeconds: 60, sessionIdleSeconds: 7200 });
    const turnId = await openTurn(session); // default snapshotTtlSeconds: 900
    const parked = await exec(session, turnId, "await yield_control(); return 'resumed'");
    expect(parked.status).toBe("waiting");
    clock.advance(120_000);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect((await footprint(session)).runs).toBe(1);
    expect(await wait(session, turnId, parked.runId)).toMatchObject({ status: "completed", value: "resumed" });

    const again = await exec(session, turnId, "await yield_control(); return 'too late'");
    clock.advance(901_000);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: again.runId })).status).toBe(404);
  });

  it("a session idle for sessionIdleSeconds deletes everything it stored: storage is empty, no alarm left", async () => {
    const session = sessionId();
    const clock = prepare({ turnIdleSeconds: 600, sessionIdleSeconds: 120 });
    const turnId = await openTurn(session);
    expect(await exec(session, turnId, "await notes_write({ key: 'n', text: 'x' }); return 1")).toMatchObject({ status: "completed" });
    clock.advance(100_000);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect((await storageOf(session)).kv).toEqual(["tool:note:n"]);

    clock.advance(40_000); // 140 s idle > 120 s + 12 s slack
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect(await storageOf(session)).toEqual(EMPTY);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(false);
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return 1" })).status).toBe(404);
    expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(404);
  });

  it("a parked run that is still valid keeps the session too, until it expires", async () => {
    const session = sessionId();
    const clock = prepare({ turnIdleSeconds: 600, sessionIdleSeconds: 120 });
    const turnId = await openTurn(session); // default snapshotTtlSeconds: 900
    const parked = await exec(session, turnId, "await yield_control(); return 'resumed'");
    clock.advance(300_000);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect((await footprint(session)).runs).toBe(1);
    clock.advance(601_000);
    expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    expect(await storageOf(session)).toEqual(EMPTY);
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: parked.runId })).status).toBe(404);
  });

  it("activity on any turn keeps the session alive", async () => {
    const session = sessionId();
    const clock = prepare({ turnIdleSeconds: 3600, sessionIdleSeconds: 120 });
    const turnId = await openTurn(session);
    for (let i = 0; i < 3; i++) {
      clock.advance(100_000);
      expect(await exec(session, turnId, `return ${i}`)).toMatchObject({ status: "completed", value: i });
      expect(await runDurableObjectAlarm(sessionStub(session))).toBe(true);
    }
    expect((await sessionProbe(session).storageUsage()).turns).toBe(1);
    expect(await alarmOf(session)).toBe(clock.now() + 132_000);
  });
});
