import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { childSessionId } from "../../src/swarm";
import { exec, openTurn, sessionId, sessionProbe, sessionStub, settleRun, wait } from "./helpers";
import { chat, script, user } from "./chat-helpers";

// Swarm (issue 27, "eviction of the parent or of a child loses nothing"): a child's turn is stored
// as running while it runs, with a heartbeat alarm. A child object reset mid-turn stored no
// result; its next incarnation's alarm finds the running record with no turn behind it, stores the
// loss as the result with the wake-up it owes, and tells the parent: a parent waiting in the same
// incarnation gets the `failed` value then, not at its run's TTL.

const MODEL = "fakeoai/gpt-fake";
const LOST = "the sub-agent's session object restarted while it ran; its transcript keeps what it did";

/** The child's stored record (test/support/session-probe.ts): running, or its result and the wake-up it owes. */
const childRecord = async (child: string) => (await sessionProbe(child).storageGet(`tool:swarm:child:swarm:${child}`)) as any;

/** Poll until `check` holds (bounded). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

/** A parent turn parked on one child whose model call is held at a barrier until `release()`. */
async function parkedOnSlowChild(text: string) {
  const session = sessionId();
  const barrier = { name: `slow-child-${session}`, count: 2 };
  const slow = await script([{ barrier, text }]);
  const gate = await script([{ barrier, text: "gate" }]);
  const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
  const child = childSessionId(session, turnId, 1);
  const r = await exec(session, turnId, `const x = await agents.run({ prompt: "${slow.marker} go", label: "slow" }); return x;`);
  expect(r.status).toBe("waiting");
  // The child's turn opened: it is stored as running, for this parent.
  await until("the child stored its turn as running", async () => (await childRecord(child))?.running !== undefined);
  const release = async () => {
    const released = await chat(sessionId(), { model: MODEL, agentId: "off", messages: user(gate.marker) });
    expect(released.json).toMatchObject({ status: "completed" });
  };
  return { session, turnId, child, r, release };
}

describe("Swarm: a child's object reset while its turn runs", () => {
  it("the child's alarm after the reset stores the loss and wakes the parent: its wait gets the failed value before the TTL", async () => {
    const { session, turnId, child, r, release } = await parkedOnSlowChild("never seen");
    expect(await childRecord(child)).toMatchObject({ running: { parentSessionId: session, childSessionId: child } });
    // The heartbeat alarm is armed for the running turn (the object's one alarm, the earliest asked for).
    expect(await sessionProbe(child).storageAlarm()).not.toBeNull();

    // Reset mid-turn (evictDurableObject would wait for the turn to drain): the running turn goes
    // with the incarnation; storage and its alarm remain.
    await sessionProbe(child).resetObject();
    // Nothing told the parent: its run is still parked.
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "waiting" });

    // The child's alarm fires in its next incarnation.
    expect(await runDurableObjectAlarm(sessionStub(child))).toBe(true);
    const done = await settleRun(session, turnId, r);
    expect(done).toMatchObject({ status: "completed", value: { status: "failed", sessionId: child, label: "slow", error: LOST } });
    // The loss is the child's stored result now; the running record is gone.
    const record = await childRecord(child);
    expect(record.result).toMatchObject({ status: "failed", error: LOST });
    expect(record).not.toHaveProperty("running");
    await release();
  });

  it("an alarm while the turn still runs in this incarnation only re-arms; the finished child leaves no running record", async () => {
    const { session, turnId, child, r, release } = await parkedOnSlowChild("slow but fine");
    // An early alarm (the heartbeat, or any other) changes nothing for a turn running here.
    expect(await runDurableObjectAlarm(sessionStub(child))).toBe(true);
    expect(await childRecord(child)).toMatchObject({ running: { parentSessionId: session } });
    expect(await sessionProbe(child).storageAlarm()).not.toBeNull();

    await release();
    expect(await settleRun(session, turnId, r)).toMatchObject({
      status: "completed",
      value: { status: "completed", text: "slow but fine", sessionId: child },
    });
    const record = await childRecord(child);
    expect(record.result).toMatchObject({ status: "completed", text: "slow but fine" });
    expect(record).not.toHaveProperty("running");
    // One record per child run: the running marker was replaced by the result, not kept beside it.
    expect(await sessionProbe(child).storageKeys("tool:swarm:")).toEqual([`tool:swarm:child:swarm:${child}`]);
  });
});
