import { describe, expect, it } from "vitest";
import { exec, openTurn, sessionId, sleep } from "./helpers";
import { decide, pendingApprovals, startExec, startWait } from "./approval-helpers";

// Seed 002: "queued work shares the execution deadline". Cells of one session run one at a time;
// a cell queued behind another has its timeoutMs counted from when it was admitted, not from
// when it starts. Here the first cell holds the session's queue while it waits for an operator
// (the `approve` agent gates notes_write; its own budget is paused meanwhile), and the queued cell
// belongs to another turn of the same session with a shorter budget: `fast` (400 ms), `tight`
// (2000 ms) or `park` (300 ms) in test/test-config.ts. The sleeps are generous waits in the
// queue, not timed assertions: the results say what happened.

/** A cell of the `approve` turn that holds the session's queue until the operator decides. */
async function holdQueue(session: string): Promise<{ release(): Promise<void> }> {
  const holder = await openTurn(session, { agentId: "approve" });
  const running = startExec(session, holder, "await notes_write({ key: 'holder', text: 'ran' }); return 'holder done';");
  const [p] = await pendingApprovals(session);
  return {
    async release() {
      expect((await decide(session, p!.approvalId, "allow")).status).toBe(200);
      expect((await running).json).toMatchObject({ status: "completed", value: "holder done" });
    },
  };
}

describe("queued work shares the execution deadline", () => {
  it("a cell whose deadline passes while queued behind another cell fails with timeout without running", async () => {
    const session = sessionId();
    const queuedTurn = await openTurn(session, { agentId: "fast" });
    const holder = await holdQueue(session);
    const queued = startExec(session, queuedTurn, "await notes_write({ key: 'queued', text: 'ran' }); return 'queued ran';");
    await sleep(2500); // far past the queued cell's 400 ms
    await holder.release();
    const r = (await queued).json;
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(r.error).toContain("behind other cells of this session");
    expect(r.error).toContain("timeoutMs 400");
    expect(r.error).toContain("it was not run");
    // It never ran: its side effect is absent, and the session still runs cells.
    expect((await exec(session, queuedTurn, "return await notes_read({ key: 'queued' })")).value).toEqual([]);
  });

  it("a cell that starts after waiting in the queue has only what is left of its timeoutMs", async () => {
    const session = sessionId();
    const queuedTurn = await openTurn(session, { agentId: "tight" });
    const holder = await holdQueue(session);
    // 1.5 s of timers fit in 2 s on its own; not after about 1.5 s in the queue.
    const queued = startExec(session, queuedTurn, "await new Promise((r) => setTimeout(r, 1500)); return 'slept';");
    await sleep(1500);
    await holder.release();
    const r = (await queued).json;
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(r.error).toContain("would wait past its deadline (timeoutMs 2000)");
    // The same cell run without a queue ahead of it has its whole budget.
    expect(await exec(session, queuedTurn, "await new Promise((r) => setTimeout(r, 1500)); return 'slept';")).toMatchObject({
      status: "completed",
      value: "slept",
    });
  });

  it("a wait whose deadline passes while queued fails with timeout and leaves its run parked for a later wait", async () => {
    const session = sessionId();
    const parkTurn = await openTurn(session, { agentId: "park" });
    const parked = await exec(session, parkTurn, "const v = await echo({ value: 'slow', delayMs: 600 }); return v + '!';");
    expect(parked).toMatchObject({ status: "waiting", reason: "pending_tools" });
    const holder = await holdQueue(session);
    const queued = startWait(session, parkTurn, parked.runId);
    await sleep(2500); // far past the wait's 300 ms
    await holder.release();
    const r = (await queued).json;
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(r.error).toContain("the run was not resumed and stays parked; call wait again");
    // Resumed by the next wait, which is not queued: the program goes on from its snapshot.
    let w = (await startWait(session, parkTurn, parked.runId)).json;
    for (let i = 0; i < 20 && w.status === "waiting"; i++) w = (await startWait(session, parkTurn, w.runId)).json;
    expect(w).toMatchObject({ status: "completed", value: "slow!" });
  });
});
