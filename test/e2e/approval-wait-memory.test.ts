import { abortAllDurableObjects } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { api, exec, expectHealthy, freshTurn, openTurn, sleep } from "./helpers";
import { failNextCodec, testVmPool } from "./session-controls";
import type { MemoryReservation } from "../../src/runtime";
import { decide, listApprovals, pendingApprovals, startExec, startWait } from "./approval-helpers";
import { mark, recordsSince } from "../support/log-capture";

// A cell waiting for an operator's decision gives its VM memory back to the isolate (issue 20,
// "Availability while waiting"), through HTTP → session object → VM. Every session object of this
// file shares the isolate's 80 MiB VM memory ledger; the `approvebig*` agents (test/test-config.ts)
// run 48 MiB VMs whose notes_write needs an approval. VMs are accounted at what they hold (not
// their limit), so a cell asleep is seen by its VM count: none alive while it waits.

/** Room the test itself holds in the isolate's ledger (`hold`), as another session's VM would. */
let testHold: MemoryReservation | null = null;

type LedgerView = { budget: number; reserved: number; cells: number; vms: number; waiting: number };

function ledger(): Promise<LedgerView> {
  const pool = testVmPool;
  return Promise.resolve({
    budget: pool.ledger.budgetBytes,
    reserved: pool.ledger.reservedBytes,
    cells: pool.ledger.reservedBytes - pool.idle.bytes,
    waiting: pool.ledger.waiting,
    // Cell VMs alive: VMs are accounted at what they hold, so their count says who is asleep.
    vms: pool.ledger.reservations - pool.idle.count - (testHold && !testHold.released ? 1 : 0),
  });
}

/** Poll the ledger until `ok` (bounded by the test timeout; no timing is asserted). */
async function until(ok: (v: LedgerView) => boolean): Promise<LedgerView> {
  for (;;) {
    const v = await ledger();
    if (ok(v)) return v;
    await sleep(10);
  }
}

/** The waiting cell's VM is gone: no cell VM is alive. */
const asleep = () => until((v) => v.vms === 0);

/** Room held by the test itself (all but `leaving`), as another session's VM would hold it. */
function hold(leaving: number, opts: { dropSpare?: boolean } = {}): Promise<boolean> {
  if (opts.dropSpare) testVmPool.dropIdle();
  testHold = testVmPool.ledger.tryReserve(testVmPool.ledger.roomBytes - leaving);
  return Promise.resolve(testHold !== null);
}

function unhold(): Promise<void> {
  testHold?.release();
  testHold = null;
  return Promise.resolve();
}

/** A 48 MiB cell of another session that fills 40 MiB of its VM. */
const FILL = "const a = []; for (let i = 0; i < 40; i++) a.push(new Uint8Array(1024 * 1024).fill(1)); return a.length;";

/** The keys of the session's notes, read by a cell of a new turn. */
async function notes(session: string): Promise<string[]> {
  const t = await openTurn(session, {});
  return (await exec(session, t, "return (await notes_read({ prefix: '' })).map((n) => n.key)")).value;
}

describe("a cell waiting for an operator's decision gives its VM memory back", () => {
  afterEach(async () => {
    await unhold();
    // Whatever a test did, no cell VM and no waiter is left.
    await until((v) => v.cells === 0 && v.waiting === 0);
  });

  it("another session's large cell runs while the decision is pending; after the allow the cell completes with its variables, pending timer and earlier output intact", async () => {
    const a = await freshTurn({ agentId: "approvebig" });
    const running = startExec(
      a.session,
      a.turnId,
      "const kept = { n: 41, words: Array.from({ length: 20000 }, (_, i) => 'w' + i) };\n" +
        "console.log('before the approval', kept.words.length);\n" +
        "const timer = new Promise((r) => setTimeout(() => r('timer fired'), 1500));\n" +
        "await notes_write({ key: 'slept', text: 'approved' });\n" +
        "kept.n++;\n" +
        "return [kept.n, kept.words[19999], await timer, (await notes_read({ key: 'slept' }))[0].text];",
    );
    const [p] = await pendingApprovals(a.session);
    await asleep();
    // The room the waiting cell had reserved now serves another session's cell of the same size.
    const b = await freshTurn({ agentId: "bigmem" });
    expect(await exec(b.session, b.turnId, FILL)).toMatchObject({ status: "completed", value: 40 });
    expect((await decide(a.session, p!.approvalId, "allow")).status).toBe(200);
    const r = (await running).json;
    expect(r).toMatchObject({ status: "completed", value: [42, "w19999", "timer fired", "approved"] });
    expect(r.output).toEqual([{ type: "text", text: "before the approval 20000" }]);
  });

  it("several approvals in one cell, in a row and at once: each wait gives the memory back, a denial is caught, the cell completes", async () => {
    const a = await freshTurn({ agentId: "approvebig" });
    const running = startExec(
      a.session,
      a.turnId,
      "const seen = [];\n" +
        "await notes_write({ key: 'one', text: '1' }); seen.push('one');\n" +
        "const both = await Promise.allSettled([notes_write({ key: 'two', text: '2' }), notes_write({ key: 'three', text: '3' })]);\n" +
        "return [seen, both.map((s) => s.status === 'fulfilled' ? s.value.key : s.reason.message)];",
    );
    const [first] = await pendingApprovals(a.session);
    await asleep();
    await decide(a.session, first!.approvalId, "allow");
    const pair = (await pendingApprovals(a.session, 2)).sort((x, y) => (x.inputPreview < y.inputPreview ? 1 : -1));
    expect(pair.map((x) => x.inputPreview)).toEqual([expect.stringContaining('"two"'), expect.stringContaining('"three"')]);
    await asleep();
    await decide(a.session, pair[0]!.approvalId, "allow");
    // One decision is still pending: the cell stays asleep.
    expect((await ledger()).vms).toBe(0);
    await decide(a.session, pair[1]!.approvalId, "deny", "not that one");
    const r = (await running).json;
    expect(r).toMatchObject({ status: "completed", value: [["one"], ["two", "notes_write was denied by the operator: not that one"]] });
  });

  it("an approval inside a wait resume: the resumed cell sleeps too and completes with its state", async () => {
    const a = await freshTurn({ agentId: "approvebig" });
    const parked = await exec(
      a.session,
      a.turnId,
      "const kept = 'across park and sleep'; await yield_control(); await notes_write({ key: 'w', text: 'x' }); return kept;",
    );
    expect(parked.status).toBe("waiting");
    const resumed = startWait(a.session, a.turnId, parked.runId);
    const [p] = await pendingApprovals(a.session);
    await asleep();
    const b = await freshTurn({ agentId: "bigmem" });
    expect(await exec(b.session, b.turnId, FILL)).toMatchObject({ status: "completed", value: 40 });
    await decide(a.session, p!.approvalId, "allow");
    expect((await resumed).json).toMatchObject({ status: "completed", value: "across park and sleep" });
  });

  it("deleting the turn while the cell sleeps ends the exec with aborted; the call never runs", async () => {
    const a = await freshTurn({ agentId: "approvebig" });
    const running = startExec(a.session, a.turnId, "await notes_write({ key: 'deleted', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(a.session);
    await asleep();
    expect((await api("DELETE", `/v1/sessions/${a.session}/turns/${a.turnId}`)).status).toBe(200);
    expect((await running).json).toMatchObject({ status: "failed", code: "aborted" });
    expect((await decide(a.session, p!.approvalId, "allow")).status).toBe(404);
    expect(await notes(a.session)).toEqual([]);
  });

  it("no room to wake in within the cell's deadline: the exec fails with runtime_unavailable, keeps its output, says the approved call may have run; the session stays healthy", async () => {
    const a = await freshTurn({ agentId: "approvebigquick" });
    const running = startExec(a.session, a.turnId, "console.log('kept output'); await notes_write({ key: 'nowake', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(a.session);
    await asleep();
    // Another holder takes all the room there is, the pool's spare included (a fresh VM holds
    // 1.5 MiB, so the spare alone would now be room enough to wake in).
    expect(await hold(0, { dropSpare: true })).toBe(true);
    await decide(a.session, p!.approvalId, "allow");
    const r = (await running).json;
    expect(r).toMatchObject({ status: "failed", code: "runtime_unavailable", output: [{ type: "text", text: "kept output" }] });
    expect(r.error).toMatch(
      /^code mode cell gave its VM memory back while it waited for an operator's decision and could not get it back within its deadline \(code mode VM memory for this isolate is exhausted \(80 MiB budget, [\d.]+ MiB in use, this cell needs [\d.]+ MiB\); try again shortly\); a call the decision allowed may already have run; check before retrying$/,
    );
    await unhold();
    await expectHealthy(a.session, a.turnId);
  });

  it("a restore that fails after the decision ends the exec with internal_error, keeps its output, gives its room back and is logged", async () => {
    const a = await freshTurn({ agentId: "approvebig" });
    const running = startExec(a.session, a.turnId, "console.log('kept output'); await notes_write({ key: 'broken', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(a.session);
    await asleep();
    // The sleeping cell's bytes decode through the worker's SnapshotCodec: make its next decode fail.
    failNextCodec("decode", new Error("corrupted while asleep"));
    const m = mark();
    await decide(a.session, p!.approvalId, "allow");
    const r = (await running).json;
    expect(r).toMatchObject({
      status: "failed",
      code: "internal_error",
      error:
        "code mode cell could not be restored after the operator's decision; a call the decision allowed may already have run; check before retrying",
      output: [{ type: "text", text: "kept output" }],
    });
    expect(recordsSince(m).filter((x) => x.kind === "host_error" && x.where === "cell.wake")).toHaveLength(1);
    await until((v) => v.cells === 0);
    await expectHealthy(a.session, a.turnId);
  });

  it("a cell too large to snapshot (maxSnapshotBytes) keeps its VM while it waits, as before, and completes after the allow", async () => {
    const a = await freshTurn({ agentId: "approvebigsnapcap" });
    const running = startExec(a.session, a.turnId, "const kept = 7; await notes_write({ key: 'big', text: 'x' }); return kept;");
    const [p] = await pendingApprovals(a.session);
    // Longer than a pause the cell would sleep through (cell-sleep.ts SLEEP_AFTER_MS).
    await sleep(600);
    const v = await ledger();
    expect(v.vms).toBe(1);
    await decide(a.session, p!.approvalId, "allow");
    expect((await running).json).toMatchObject({ status: "completed", value: 7 });
  });

  it("a reset of the session object while the cell sleeps fails the exec as before; the approval is lost and nothing ran", async () => {
    const a = await freshTurn({ agentId: "approvebig" });
    const running = startExec(a.session, a.turnId, "await notes_write({ key: 'reset', text: 'x' }); return 'ran';");
    const [p] = await pendingApprovals(a.session);
    await asleep();
    await abortAllDurableObjects();
    expect((await running).json).toMatchObject({ status: "failed", code: "internal_error" });
    expect(await listApprovals(a.session)).toEqual([]);
    expect((await decide(a.session, p!.approvalId, "allow")).status).toBe(409);
    expect(await notes(a.session)).toEqual([]);
  });
});
