import { describe, expect, it } from "vitest";
import { exec, expectHealthy, footprint, freshTurn } from "./helpers";

describe("the JSON bridge and the executor path", () => {
  it("nested tool errors are catchable plain Errors with no host details", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `try { await shipping_get({ id: 'zzz' }); } catch (e) {
         return { isError: e instanceof Error, message: e.message, proto: Object.getPrototypeOf(e) === Error.prototype,
                  keys: Object.getOwnPropertyNames(e).sort(), stackHasHost: /\\.ts|node_modules|workers/.test(String(e.stack)) };
       }`,
    );
    expect(r.value).toEqual({ isError: true, message: "shipment zzz not found", proto: true, keys: ["message"], stackHasHost: false });
  });

  it("invalid tool input is reported by the executor", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "try { await shipping_get({}); } catch (e) { return e.message }");
    expect(r.value).toMatch(/^invalid input for shipping_get: .*id/);
  });

  it("tool results are JSON details, with no envelope", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "return await shipping_get({ id: 'SH-1004' })");
    expect(r.value).toEqual({ id: "SH-1004", paid: true, tons: 31 });
  });

  it("a non-JSON tool input is rejected in the guest before it reaches the host", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "const a = {}; a.a = a; try { await echo(a) } catch (e) { return e.message }");
    expect(r.value).toMatch(/JSON-compatible/);
    expect(r.telemetry.counters.call).toBe(0);
  });

  it("Promise.all of parallel calls up to maxPendingToolCalls completes in one exec", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(session, turnId, "return await Promise.all([1,2,3,4].map((n) => echo({ value: n, delayMs: 20 })))");
    expect(r).toMatchObject({ status: "completed", value: [1, 2, 3, 4] });
    expect(r.telemetry.counters.call).toBe(4);
  });

  it("an oversized batch fails before any call in it is dispatched", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(
      session,
      turnId,
      `try { await Promise.all([1,2,3,4,5].map((n) => notes_write({ key: 'k' + n, text: 'x' }))); }
       catch (e) { const listed = await notes_read({ prefix: 'k' }); return { error: e.message, written: listed.length }; }`,
    );
    expect(r.status).toBe("completed");
    expect(r.value.error).toMatch(/too many pending tool calls: 5 requested, maxPendingToolCalls is 4/);
    expect(r.value.written).toBe(0);
  });

  it("dispatched calls are drained before a cell completes", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "notes_write({ key: 'late', text: 'written' }); return 'returned first';");
    expect(r).toMatchObject({ status: "completed", value: "returned first" });
    const r2 = await exec(session, turnId, "return await notes_read({ key: 'late' })");
    expect(r2.value).toEqual([{ key: "late", text: "written" }]);
  });

  it("setTimeout and clearTimeout work within a cell", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const order = [];
       const t = setTimeout(() => order.push('cancelled'), 5);
       clearTimeout(t);
       await new Promise((r) => setTimeout(() => { order.push('fired'); r(); }, 10));
       return order;`,
    );
    expect(r.value).toEqual(["fired"]);
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
});
