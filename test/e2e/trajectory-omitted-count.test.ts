import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_TRAJECTORY_EVENTS } from "../../src/limits";
import { api, sessionId, sessionStub } from "./helpers";
import { rows } from "./chat-helpers";

/**
 * A turn past MAX_TRAJECTORY_EVENTS counts each later event in its `omitted` row. The session
 * object keeps that row's place and count in memory (no scan of the turn's events per event): the
 * count stays exact across cells and across a fresh instance of the object, which reads it again.
 */
describe("trajectory: events past the bound are counted exactly", () => {
  it("every nested call past the bound is counted, before and after the session object is evicted", async () => {
    const session = sessionId();
    const turn = await api("POST", `/v1/sessions/${session}/turns`, { agentId: "bigmem" });
    const tools = `/v1/sessions/${session}/turns/${turn.json.turnId}/tools`;
    const calls = async (n: number) =>
      expect(
        (await api("POST", `${tools}/exec`, { code: `let n = 0; for (let i = 0; i < ${n}; i++) n += await echo({ value: 1 }); return n;` })).json,
      ).toMatchObject({
        status: "completed",
        value: n,
      });
    const omitted = async () => (await api("GET", `/v1/sessions/${session}/turns/${turn.json.turnId}/trajectory`)).json.omittedEvents as number;
    // Every event a cell makes is either a stored row or counted as omitted.
    const events = async () => {
      const [stored] = await rows<{ n: number }>(
        session,
        `SELECT COUNT(*) AS n FROM trajectory WHERE turn_id = '${turn.json.turnId}' AND kind != 'omitted'`,
      );
      return stored!.n + (await omitted());
    };

    await calls(MAX_TRAJECTORY_EVENTS + 10);
    const first = await events();
    expect(await omitted()).toBeGreaterThan(10);
    // A cell's start, its nested calls, its end.
    await calls(7);
    const second = await events();
    expect(second - first).toBe(7 + 2);
    await evictDurableObject(sessionStub(session));
    await calls(5);
    expect((await events()) - second).toBe(5 + 2);
    const [count] = await rows<{ n: number }>(session, `SELECT COUNT(*) AS n FROM trajectory WHERE turn_id = '${turn.json.turnId}'`);
    expect(count!.n).toBeLessThanOrEqual(MAX_TRAJECTORY_EVENTS);
  });
});
