import { describe, expect, it } from "vitest";
import { exec, expectHealthy, openTurn, sessionId, sleep } from "./helpers";
import { decide, listApprovals, notes, pendingApprovals, startExec } from "./approval-helpers";

// A cell waiting for an operator's decision has its budget paused (test/unit/policy/budget-pause.test.ts):
// the pause never turns into more budget for guest work, and its total per cell is bounded.
// Agents: `approve` (1 s cell budget, 30 s to decide), `approvefast` (1 s to decide).

describe("the budget pause cannot be turned into more budget", () => {
  it("a cell that spins CPU while an approval is pending still stops at its tick budget (timeout), and its approval is cancelled", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    // The gated call is dispatched once the guest yields (the zero timer); then the guest spins.
    const r = await exec(
      session,
      turnId,
      "const p = notes_write({ key: 'spin', text: 'x' }).catch((e) => e.message);\n" +
        "await new Promise((r) => setTimeout(r, 0));\n" +
        "let i = 0; for (;;) { i++; }",
    );
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    // Fail closed: nothing is left for an operator to allow later.
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
    await expectHealthy(session, turnId);
  }, 20_000);

  it("zero-delay timers re-armed while paused spend the tick budget: the cell ends long before the 30 s approval timeout", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const r = await exec(
      session,
      turnId,
      "notes_write({ key: 'tick', text: 'x' }).catch(() => {});\n" + "let n = 0; for (;;) { await new Promise((r) => setTimeout(r, 0)); n++; }",
    );
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
  }, 20_000);

  it("a cell that throws while its approval is pending fails and leaves no approval behind", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const r = await exec(
      session,
      turnId,
      "notes_write({ key: 'thrown', text: 'x' }).catch(() => {});\nawait new Promise((r) => setTimeout(r, 50));\nthrow new Error('boom');",
    );
    expect(r).toMatchObject({ status: "failed", error: expect.stringContaining("boom") });
    expect(await listApprovals(session)).toEqual([]);
    expect(await notes(session)).toEqual([]);
  });

  it("timers due after the original deadline fire while paused; the cell completes after the allow", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approve" });
    const running = startExec(
      session,
      turnId,
      "let fired = false; setTimeout(() => { fired = true; }, 1500);\nawait notes_write({ key: 'timer', text: 'x' });\nreturn fired;",
    );
    const [p] = await pendingApprovals(session);
    await sleep(2000); // past the 1 s budget and past the timer's due time
    await decide(session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: true });
  });

  // Regression: each approval is bounded by timeoutSeconds, but the number of approvals one cell
  // could await was not: a pause cost about one settle tick, so a 1 s cell (3000 ticks) could wait
  // for thousands of approvals in a row (each up to timeoutSeconds, at most 3600 s), all the while
  // holding the session's serial queue (every other exec/wait of the session, of any turn, waits
  // behind it); a deny did not stop it either, the loop just asked again.
  it("the pause has a bound per cell: a 1 s cell chaining gated calls that each time out cannot wait out five of them (5 × timeoutSeconds) holding the session", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "approvefast" }); // 1 s budget, 1 s to decide
    const r = await exec(
      session,
      turnId,
      "let timedOut = 0;\nfor (let i = 0; i < 5; i++) { try { await notes_write({ key: 'k' + i, text: 'x' }); } catch (e) { if (/in time/.test(e.message)) timedOut++; } }\nreturn timedOut;",
    );
    // Expected: the cell's paused time is bounded (about one timeoutSeconds), so it cannot have
    // waited out five approvals in a row.
    expect(r.status === "failed" || (typeof r.value === "number" && r.value < 5)).toBe(true);
  }, 20_000);
});
