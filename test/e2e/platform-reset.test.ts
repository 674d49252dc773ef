import { describe, expect, it } from "vitest";
import { api, cellRunning, exec, expectHealthy, footprint, freshTurn, inSession, openTurn, untilInSession, wait } from "./helpers";

/**
 * The platform's CPU limit (`limits.cpu_ms`) is the last line against guest work the budget
 * cannot see; when it (or a deploy) resets the session object mid-cell, the caller gets a
 * failed result, the session answers its next request, and parked runs are intact.
 * Local workerd does not enforce cpu_ms, so the reset is forced with `ctx.abort()`.
 */
describe("recovery when the platform resets the session object under a cell", () => {
  it("the interrupted exec is reported as failed; parked runs survive; the next request works", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const parked = await exec(session, turnId, "return 'parked: ' + await ask_user({ q: 'x' })");
    expect(parked.status).toBe("waiting");

    const running = api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code: "return await echo({ value: 1, delayMs: 3000 })" });
    await untilInSession(session, cellRunning, "the exec is running");
    await inSession(session, (_instance, state) => {
      try {
        state.abort("simulated platform CPU limit");
      } catch {
        // abort() throws in the calling context by design
      }
    }).catch(() => undefined);
    const r = await running;
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "failed", code: "internal_error" });
    expect(r.json.error).toContain("session object was reset");
    expect(r.json.telemetry).toBeDefined();

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
});
