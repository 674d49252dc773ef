import { describe, expect, it } from "vitest";
import { ChildRuns } from "../../../src/swarm";
import type { ChildRunsPort } from "../../../src/swarm/child-runs";
import type { SessionStore } from "../../../src/tools";

// The child half of Swarm keeps a durable "running" record for a sub-agent turn so that a reset of
// its object mid-turn is found by the next incarnation's alarm. The record is written inside the
// transaction that stores the turn: a reset can fall after the turn is stored and before its /chat
// stream reports it, and the record must already be there.

const LOST = "the sub-agent's session object restarted while it ran; its transcript keeps what it did";

/** Storage that outlives an incarnation: writes land before `put` returns, as the session's KV does. */
function durableStore(): SessionStore & { data: Map<string, unknown> } {
  const data = new Map<string, unknown>();
  return {
    data,
    get: async (key) => data.get(key),
    put: (key, value) => {
      data.set(key, structuredClone(value));
      return Promise.resolve();
    },
    delete: async (key) => data.delete(key),
    list: async (prefix, limit) =>
      [...data]
        .filter(([k]) => k.startsWith(prefix))
        .slice(0, limit)
        .map(([key, value]) => ({ key, value })),
  };
}

function port(store: SessionStore, over: Partial<ChildRunsPort>) {
  const told: string[][] = [];
  const alarms: number[] = [];
  const p: ChildRunsPort = {
    chat: () => new Promise(() => undefined),
    store,
    started: () => true,
    tellParent: async (tenantId, parentSessionId, childSessionId) => void told.push([tenantId, parentSessionId, childSessionId]),
    now: () => 1_000,
    armAlarm: (at) => void alarms.push(at),
    ...over,
  };
  return { p, told, alarms };
}

describe("ChildRuns: a reset right after the child's turn is stored", () => {
  it("the next incarnation's alarm finds the running record, stores the loss and wakes the parent", async () => {
    const store = durableStore();
    let opened = false;
    // The turn is stored (and `stored` runs in its transaction); then the incarnation dies before
    // the /chat stream reports anything.
    const first = port(store, {
      started: () => opened,
      chat: (_t, _s, _req, _id, stored) => {
        opened = true;
        stored("turn-1");
        return new Promise(() => undefined);
      },
    });
    await new ChildRuns(first.p).start("acme", "parent.sub-1", { model: "m/x", messages: [], maxAssistantTurns: 1 }, "swarm:parent.sub-1", "parent");
    expect(store.data.get("swarm:child:swarm:parent.sub-1")).toMatchObject({
      tenantId: "acme",
      running: { parentSessionId: "parent", childSessionId: "parent.sub-1" },
    });
    expect(first.alarms).toEqual([1_000 + 30_000]);

    const next = port(store, {});
    await new ChildRuns(next.p).retryWakes();
    expect(next.told).toEqual([["acme", "parent", "parent.sub-1"]]);
    expect(store.data.get("swarm:child:swarm:parent.sub-1")).toMatchObject({ result: { status: "failed", sessionId: "parent.sub-1", error: LOST } });
  });

  it("a turn that never got stored leaves no record and wakes nobody", async () => {
    const store = durableStore();
    const first = port(store, { started: () => false });
    await new ChildRuns(first.p).start("acme", "parent.sub-2", { model: "m/x", messages: [], maxAssistantTurns: 1 }, "swarm:parent.sub-2", "parent");
    expect(store.data.size).toBe(0);
    const next = port(store, {});
    await new ChildRuns(next.p).retryWakes();
    expect(next.told).toEqual([]);
  });
});
