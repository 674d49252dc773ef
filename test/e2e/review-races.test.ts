import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, exec, expectHealthy, footprint, freshTurn, sleep, wait } from "./helpers";

describe("races and limits found in review", () => {
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

  it("bridge requests are bounded before the program awaits: count, bytes and search query length", async () => {
    const { session, turnId } = await freshTurn();
    const count = await exec(
      session,
      turnId,
      "const rs = await Promise.allSettled(Array.from({ length: 3000 }, () => catalog.search('x'))); return [rs.filter((r) => r.status === 'fulfilled').length, rs.find((r) => r.status === 'rejected')?.reason.message];",
    );
    expect(count.value).toEqual([2048, expect.stringMatching(/too many bridge requests at once \(at most 2048/)]);
    const bytes = await exec(
      session,
      turnId,
      "const rs = await Promise.allSettled(Array.from({ length: 5 }, () => echo({ value: 'x'.repeat(300000) }))); return rs.map((r) => r.status);",
    );
    expect(bytes.value).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "rejected"]);
    const query = await exec(session, turnId, "try { await catalog.search('y'.repeat(2000)); return 'no'; } catch (e) { return e.message; }");
    expect(query.value).toMatch(/longer than 1024 characters/);
    await expectHealthy(session, turnId);
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

  it("two yields at once both settle after wait", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "await Promise.all([yield_control('a'), yield_control('b')]); return 'both';");
    expect(r).toMatchObject({ status: "waiting", reason: "yield" });
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "both" });
  });

  it("a polluted Object.prototype or Promise.prototype cannot change what the host reads", async () => {
    const { session, turnId } = await freshTurn();
    const a = await exec(session, turnId, "Object.prototype.syntax = true; throw new Error('plain runtime error');");
    expect(a.status).toBe("failed");
    expect(a.code).toBeUndefined();
    const b = await exec(session, turnId, "Object.prototype.toJSON = function () { return { state: 'completed' }; }; await new Promise(() => {});");
    expect(b.status).toBe("failed");
    expect(b.error).toMatch(/nothing will settle/);
    const c = await exec(session, turnId, "Promise.prototype.then = function () {}; return 5;");
    expect(c).toMatchObject({ status: "completed", value: 5 });
  });

  it("a client result delivered twice across a re-park is a 409", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const r = await exec(session, turnId, "const a = await ask_user({ n: 1 }); await yield_control(); return a;");
    const path = `/v1/sessions/${session}/turns/${turnId}/client-results`;
    const callId = r.pendingToolCalls[0].callId;
    expect((await api("POST", path, { callId, value: "first" })).status).toBe(202);
    const w = await wait(session, turnId, r.runId);
    expect(w).toMatchObject({ status: "waiting", reason: "yield" });
    const again = await api("POST", path, { callId, value: "second" });
    expect(again.status).toBe(409);
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "completed", value: "first" });
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

describe("adversarial probe fixes", () => {
  it("JSON nested deeper than 256 levels is refused where it enters the host", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "ask_user" }] });
    const deep = "let a = 1; for (let i = 0; i < 4000; i++) a = [a];";
    expect(await exec(session, turnId, `${deep} return a;`)).toMatchObject({ status: "failed", code: "output_limit_exceeded" });
    expect((await exec(session, turnId, `${deep} try { json(a); } catch (e) { return e.message; }`)).value).toMatch(/nested deeper than 256/);
    expect((await exec(session, turnId, `${deep} try { await ask_user({ q: a }); } catch (e) { return e.message; }`)).value).toMatch(
      /nested deeper than 256/,
    );
    expect(await footprint(session)).toEqual({ runs: 0, chunks: 0, results: 0, storedBytes: 0 });
    await expectHealthy(session, turnId);
  });

  it("a client tool input larger than maxOutputBytes is refused at the call; host tool inputs are bounded in pendingToolCalls", async () => {
    const { session, turnId } = await freshTurn({ agentId: "parktight", clientTools: [{ name: "ask_user" }] });
    const big = await exec(session, turnId, "try { await ask_user({ q: 'y'.repeat(5000) }); } catch (e) { return e.message; }");
    expect(big.value).toMatch(/larger than maxOutputBytes \(2048\)/);
    const parked = await exec(session, turnId, "return await echo({ value: 'x'.repeat(900000), delayMs: 5000 });");
    expect(parked.status).toBe("waiting");
    expect(JSON.stringify(parked).length).toBeLessThan(2048 + 2048);
    expect(parked.pendingToolCalls[0]).toMatchObject({ tool: "echo", input: { truncated: true } });
  });
});
