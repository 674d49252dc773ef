import { describe, expect, it } from "vitest";
import { exec, freshTurn, sessionStub, sleep, cellRunning, untilInSession } from "./helpers";

// The Worker cancels a call when its HTTP client disconnects (request.signal, enabled by the
// enable_request_signal flag) by calling cancelRequest(requestId) on the session object. Local
// workerd does not deliver client disconnects to request.signal, so this drives the object's
// RPC surface directly, as the Worker does.
describe("a cancelled request cancels its cell", () => {
  it("cancelRequest stops the exec and its pending host work; the result is aborted", async () => {
    const { session, turnId } = await freshTurn();
    const stub = sessionStub(session) as any;
    const running = stub.callTool(
      "tenant-a",
      turnId,
      "exec",
      { code: "await echo({ value: 1, delayMs: 1000 }); await notes_write({ key: 'after-abort', text: 'x' }); return 1;" },
      "req-1",
    );
    await untilInSession(session, cellRunning, "the exec is running");
    await stub.cancelRequest("req-1");
    const reply = await running;
    expect(reply.body.result).toMatchObject({ status: "failed", code: "aborted" });
    await sleep(1000);
    expect(await exec(session, turnId, "return await notes_read({ key: 'after-abort' })")).toMatchObject({ value: [] });
  });

  it("a cancelled wait drops its run: the runId can never be resumed", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const parked = await exec(session, turnId, "return await echo({ value: 1, delayMs: 2000 })");
    expect(parked.status).toBe("waiting");
    const stub = sessionStub(session) as any;
    const waiting = stub.callTool("tenant-a", turnId, "wait", { runId: parked.runId }, "req-2");
    await untilInSession(session, cellRunning, "the wait is running");
    await stub.cancelRequest("req-2");
    expect((await waiting).body.result).toMatchObject({ status: "failed", code: "aborted" });
    const again = await stub.callTool("tenant-a", turnId, "wait", { runId: parked.runId });
    expect(again.body.result).toMatchObject({ status: "failed", error: "code mode run is unavailable or expired." });
  });
});
