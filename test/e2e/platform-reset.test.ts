import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, cellRunning, exec, expectHealthy, footprint, freshTurn, openTurn, sleep, untilInSession, wait } from "./helpers";
import { setVmFault } from "./session-controls";
import { mark, recordsSince } from "../support/log-capture";

/**
 * The platform's CPU limit (`limits.cpu_ms`) is the last line against guest work the budget
 * cannot see; when it (or a deploy) resets the session object mid-cell, the caller gets a
 * failed result, the session answers its next request, and parked runs are intact.
 * Local workerd does not enforce cpu_ms, so the reset is forced with `abortAllDurableObjects()`
 * (what `ctx.abort()` does to one object, without workerd printing the abort as an uncaught
 * exception).
 */
describe("recovery when the platform resets the session object under a cell", () => {
  it("the interrupted exec is reported as failed; parked runs survive; the next request works", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const parked = await exec(session, turnId, "return 'parked: ' + await ask_user({ q: 'x' })");
    expect(parked.status).toBe("waiting");

    const from = mark();
    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return await echo({ value: 1, delayMs: 3000 })" });
    await untilInSession(session, cellRunning, "the exec is running");
    await abortAllDurableObjects();
    const r = await running;
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "failed", code: "internal_error" });
    expect(r.json.error).toContain("session object was reset");
    expect(r.json.telemetry).toBeDefined();

    // The reset is logged with its cause, and the lost cell has its record (from the fresh
    // instance), under the request's id.
    const records = recordsSince(from);
    const reset = records.filter((x) => x.kind === "host_error" && x.where === "tool_call.session_reset");
    expect(reset).toHaveLength(1);
    expect(reset[0]).toMatchObject({ tenant: "tenant-a", turnId, tool: "exec" });
    expect(reset[0]!.error.message).toBeTruthy();
    const lost = records.filter((x) => x.kind === "cell" && x.lost === true);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ tool: "exec", outcome: "failed", errorCode: "internal_error", requestId: reset[0]!.requestId });
    expect(records.filter((x) => x.kind === "request" && x.requestId === reset[0]!.requestId)).toMatchObject([{ status: 200, tool: "exec" }]);

    // The session answers, and the parked run is still there and resumable.
    await expectHealthy(session, turnId);
    expect((await footprint(session)).runs).toBe(1);
    const callId = parked.pendingToolCalls[0].callId;
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId, value: "yes" })).status).toBe(202);
    expect(await wait(session, turnId, parked.runId)).toMatchObject({ status: "completed", value: "parked: yes" });
  });

  it("an unknown turn after a reset is still 404", async () => {
    const { session } = await freshTurn();
    const other = await openTurn(session);
    const r = await api("POST", `/v1/sessions/${session}/turns/nope-${other}/tools/exec`, { code: "return 1" });
    expect(r.status).toBe(404);
  });

  it("a resume that dies midway is never replayed: the next wait fails and side effects stay single", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park", clientTools: [{ name: "ask_user" }] });
    const r = await exec(
      session,
      turnId,
      `await ask_user({});
       const [prev] = await notes_read({ key: 'counter' });
       await notes_write({ key: 'counter', text: String(Number(prev ? prev.text : 0) + 1) });
       await echo({ value: 1, delayMs: 3000 });
       return 'done';`,
    );
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: r.pendingToolCalls[0].callId, value: "go" });
    // The wait runs the write, then parks on the slow echo... reset the object while it resumes.
    const inFlight = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId: r.runId }).catch(() => null);
    await sleep(150);
    await abortAllDurableObjects();
    await inFlight;
    // The reset came while the wait was still driving (its 300 ms deadline had not passed).
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "failed", code: "internal_error", error: expect.stringMatching(/interrupted while resuming/) });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    const count = await exec(session, turnId, "return (await notes_read({ key: 'counter' }))[0].text");
    expect(count.value).toBe("1");
  });
});

describe("fail closed when the sandbox cannot start", () => {
  it("an engaged turn whose VM cannot start answers runtime_unavailable, never a direct-tool fallback; the session recovers", async () => {
    const { session, turnId } = await freshTurn();
    // The isolate's VM pool cannot prepare a VM (what a broken engine looks like).
    setVmFault("cannot_start");
    const r = await exec(session, turnId, "return 1 + 2");
    expect(r).toMatchObject({ status: "failed", code: "runtime_unavailable", error: "QuickJS-WASI runtime is unavailable: the VM could not start" });
    // The model-facing surface stays exec + wait: nothing falls back to the hidden tools.
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/shipping_list`, {})).status).toBe(404);
    setVmFault(null);
    await expectHealthy(session, turnId);
  });
});

describe("a cell's failure is data, never an HTTP 500", () => {
  it("an exception escaping the cell machinery answers failed internal_error (200) and the session recovers", async () => {
    const { session, turnId } = await freshTurn();
    // The VM pool throws on use: an exception escapes the cell machinery.
    setVmFault("broken");
    const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return 1" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "failed", code: "internal_error", error: "internal error in the code mode runtime" });
    expect(r.json.telemetry).toBeDefined();
    setVmFault(null);
    await expectHealthy(session, turnId);
  });
});
