import { describe, expect, it } from "vitest";
import { api, exec, freshTurn, wait } from "./helpers";

/**
 * The output contract and maxOutputBytes must agree: a value whose declared output is an array
 * never reaches the guest as the truncation marker object. (Agent "tight": maxOutputBytes 2048.)
 */
describe("an oversized result of a tool with a declared output", () => {
  it("fails the call with a catchable error naming the limit, instead of a marker that breaks .filter", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    await exec(session, turnId, "await notes_write({ key: 'big', text: 'x'.repeat(3000) }); return 1;");
    const r = await exec(
      session,
      turnId,
      `try { const notes = await notes_read({ key: 'big' }); return notes.filter((n) => n.text.length > 0).length; }
       catch (e) { return e.message; }`,
    );
    expect(r.status).toBe("completed");
    expect(r.value).toMatch(
      /^notes_read returned 30\d\d bytes, over maxOutputBytes \(2048\); its declared output cannot be truncated — ask for less \(narrower arguments, fewer items, a page at a time\)$/,
    );
    // Uncaught, it fails the cell with the same message (not a TypeError from .filter on the marker).
    const uncaught = await exec(session, turnId, "const notes = await notes_read({ key: 'big' }); return notes.filter(Boolean).length;");
    expect(uncaught.status).toBe("failed");
    expect(uncaught.error).toContain("over maxOutputBytes (2048); its declared output cannot be truncated");
  });

  it("within the limit the declared value arrives whole", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    await exec(session, turnId, "await notes_write({ key: 'small', text: 'y'.repeat(100) }); return 1;");
    expect((await exec(session, turnId, "return (await notes_read({ key: 'small' })).map((n) => n.text.length)")).value).toEqual([100]);
  });

  it("a tool without a declared output keeps the seed's truncation marker", async () => {
    const { session, turnId } = await freshTurn({ agentId: "tight" });
    const r = await exec(
      session,
      turnId,
      "const v = await echo({ value: 'z'.repeat(5000) }); return { truncated: v.truncated, keys: Object.keys(v).sort(), omitted: v.omittedBytes > 0 };",
    );
    expect(r.value).toEqual({ truncated: true, keys: ["guidance", "omittedBytes", "prefix", "truncated"], omitted: true });
  });
});

describe("an oversized client result", () => {
  it("with a declared outputSchema fails at wait naming the limit; without one it arrives as the marker", async () => {
    const { session, turnId } = await freshTurn({
      agentId: "tight",
      clientTools: [{ name: "list_names", outputSchema: { type: "array", items: { type: "string" } } }, { name: "free_form" }],
    });
    const r = await exec(
      session,
      turnId,
      `const out = {};
       try { out.declared = (await list_names({})).length; } catch (e) { out.declared = e.message; }
       const free = await free_form({});
       out.free = free.truncated === true;
       return out;`,
    );
    const big = Array.from({ length: 400 }, (_, i) => `name-${i}`);
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: r.pendingToolCalls[0].callId, value: big });
    const second = await wait(session, turnId, r.runId);
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: second.pendingToolCalls[0].callId, value: big });
    const done = await wait(session, turnId, second.runId);
    expect(done.status).toBe("completed");
    expect(done.value.declared).toMatch(/^list_names returned \d+ bytes, over maxOutputBytes \(2048\); its declared output cannot be truncated/);
    expect(done.value.free).toBe(true);
  });
});
