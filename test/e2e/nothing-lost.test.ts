import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { frozenClock } from "../../src/runtime";
import { api, exec, expectHealthy, footprint, freshTurn, sessionStub, wait } from "./helpers";
import { setClock } from "./session-controls";

const ASK = { clientTools: [{ name: "ask_user", description: "Ask the user a question" }] };

async function deliver(session: string, turnId: string, callId: string, value: unknown) {
  return api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId, value });
}

/** Wait until the run settles; host work may need a few waits. Bounded. */
async function settle(session: string, turnId: string, first: any) {
  let r = first;
  for (let i = 0; i < 20 && r.status === "waiting"; i++) r = await wait(session, turnId, r.runId);
  return r;
}

describe("a delivered client result is never lost", () => {
  it("reaches the program when the run parked with a host tool still running", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park", ...ASK });
    const r = await exec(
      session,
      turnId,
      "const [slow, name] = await Promise.all([echo({ value: 'slow', delayMs: 500 }), ask_user({ q: 'name?' })]); return slow + ' ' + name;",
    );
    expect(r.status).toBe("waiting");
    const call = r.pendingToolCalls.find((c: any) => c.tool === "ask_user");
    expect((await deliver(session, turnId, call.callId, "Ada")).status).toBe(202);
    const w = await settle(session, turnId, r);
    expect(w).toMatchObject({ status: "completed", value: "slow Ada" });
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
  });

  it("reaches the program across a re-park and an eviction", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park", ...ASK });
    const r = await exec(
      session,
      turnId,
      "const a = ask_user({ q: 'first?' }); const s = await echo({ value: 's', delayMs: 450 }); const b = await ask_user({ q: 'second?' }); return [await a, s, b].join('-');",
    );
    expect(r.status).toBe("waiting");
    const first = r.pendingToolCalls.find((c: any) => c.tool === "ask_user");
    expect((await deliver(session, turnId, first.callId, "one")).status).toBe(202);
    let w = await wait(session, turnId, r.runId);
    for (let i = 0; i < 20 && w.status === "waiting" && !w.pendingToolCalls?.some((c: any) => c.input?.q === "second?"); i++)
      w = await wait(session, turnId, w.runId);
    expect(w.status).toBe("waiting");
    const second = w.pendingToolCalls.find((c: any) => c.input?.q === "second?");
    await evictDurableObject(sessionStub(session));
    expect((await deliver(session, turnId, second.callId, "two")).status).toBe(202);
    expect(await settle(session, turnId, w)).toMatchObject({ status: "completed", value: "one-s-two" });
  });
});

describe("when to park", () => {
  it("a cell awaiting a client tool parks at once, even with its own guard timer pending", async () => {
    // A frozen clock: if exec waited for the timer or the deadline, it would never answer.
    const { session, turnId } = await freshTurn(ASK);
    setClock(frozenClock());
    const r = await exec(
      session,
      turnId,
      "const g = setTimeout(() => text('guard fired'), 15000); const a = await ask_user({ q: 'x' }); clearTimeout(g); return a;",
    );
    expect(r).toMatchObject({ status: "waiting", reason: "pending_tools" });
    expect(r.output).toBeUndefined(); // parked before the guard timer could fire
    expect(r.pendingToolCalls).toEqual([expect.objectContaining({ tool: "ask_user" })]);
    await deliver(session, turnId, r.pendingToolCalls[0].callId, "answer");
    const w = await wait(session, turnId, r.runId);
    // clearTimeout after resume cancelled the timer set before the park.
    expect(w).toEqual(expect.objectContaining({ status: "completed", value: "answer" }));
    expect(w.output).toBeUndefined();
  });

  it("a client call parks at once even while a slow host tool runs; the host result is delivered later", async () => {
    const { session, turnId } = await freshTurn(ASK);
    setClock(frozenClock());
    const r = await exec(
      session,
      turnId,
      "const p = echo({ value: 'slow', delayMs: 400 }); const a = await ask_user({ q: '?' }); return [a, await p];",
    );
    expect(r).toMatchObject({ status: "waiting", reason: "pending_tools" });
    const call = r.pendingToolCalls.find((c: any) => c.tool === "ask_user");
    expect(call).toBeDefined();
    await deliver(session, turnId, call.callId, "yes");
    expect(await settle(session, turnId, r)).toMatchObject({ status: "completed", value: ["yes", "slow"] });
  });

  it("timers keep their due times across a park and fire in due order on the next wait", async () => {
    const { session, turnId } = await freshTurn(ASK);
    const r = await exec(
      session,
      turnId,
      "const order = []; setTimeout(() => order.push('b'), 60); setTimeout(() => order.push('a'), 20); const v = await ask_user({}); await new Promise((res) => setTimeout(res, 1)); return [v, ...order];",
    );
    expect(r.status).toBe("waiting");
    await new Promise((res) => setTimeout(res, 100)); // both timers are overdue when the wait starts
    await deliver(session, turnId, r.pendingToolCalls[0].callId, "v");
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: ["v", "a", "b"] });
  });

  it("a cell whose only pending work is its own timer never parks: a timer past the deadline is a timeout", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(session, turnId, "await new Promise((res) => setTimeout(res, 5000)); return 'late';");
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect(r.error).toContain("timeoutMs 300");
    expect((await footprint(session)).runs).toBe(0);
    await expectHealthy(session, turnId);
  });

  it("an endless setTimeout(f, 0) chain is a timeout, not a series of waiting results (frozen clock)", async () => {
    const { session, turnId } = await freshTurn({ agentId: "fast" });
    setClock(frozenClock());
    const r = await exec(
      session,
      turnId,
      "let n = 0; await new Promise(() => { const tick = () => { n++; setTimeout(tick, 0); }; tick(); }); return n;",
    );
    expect(r).toMatchObject({ status: "failed", code: "timeout" });
    expect((await footprint(session)).runs).toBe(0);
    await expectHealthy(session, turnId);
  });

  it("timers within the deadline run inside exec without parking", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "const t = []; await new Promise((res) => setTimeout(() => { t.push(1); res(); }, 30)); return t;");
    expect(r).toMatchObject({ status: "completed", value: [1] });
  });
});

describe("restartSafe cells call only replay-safe tools", () => {
  it("a client tool (which carries no replay-safe marker) is refused before it is handed out", async () => {
    const { session, turnId } = await freshTurn(ASK);
    const r = await exec(session, turnId, "try { return await ask_user({ q: 'x' }); } catch (e) { return 'refused: ' + e.message; }", {
      restartSafe: true,
    });
    expect(r).toMatchObject({
      status: "completed",
      value: "refused: ask_user is not replay-safe; restartSafe cells may only call replay-safe tools",
    });
    expect(r.pendingToolCalls).toBeUndefined();
    expect((await footprint(session)).runs).toBe(0);
  });

  it("an uncaught refusal fails the cell instead of parking it", async () => {
    const { session, turnId } = await freshTurn(ASK);
    const r = await exec(session, turnId, "return await ask_user({ q: 'x' });", { restartSafe: true });
    expect(r).toMatchObject({ status: "failed" });
    expect(r.error).toContain("not replay-safe");
  });
});
