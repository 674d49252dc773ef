import { env, evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { childSessionId } from "../../src/swarm";
import { exec, footprint, openTurn, sessionId, sessionProbe, sessionStub, settleRun, wait } from "./helpers";
import { script, trajectory } from "./chat-helpers";
import { setSessionEnv } from "./session-controls";

// Swarm (issue 27, "Durable waiting"): a child stores its answer with the wake-up it owes its parent,
// and its object's alarm retries that wake-up until the parent's object takes it. A parent parked
// on a child whose wake-ups fail (its object unreachable, the child's object evicted after storing)
// still resumes once a retry lands, long before its run's TTL; a wake-up delivered twice is a no-op.

const MODEL = "fakeoai/gpt-fake";

/**
 * The child object's `SESSIONS` binding, as it reaches its parent: `refuse` fails every wake-up as
 * an unreachable parent object would; `loseAnswers` delivers that many, then fails them as if the
 * answer was lost on the way back. Counts what the child tried and what reached the parent.
 */
function wakeFaults(child: string) {
  const real = (env as any).SESSIONS;
  const faults = { refuse: false, loseAnswers: 0, tries: 0, delivered: 0 };
  const SESSIONS = {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => ({
      async childSettled(childSession: string): Promise<void> {
        faults.tries++;
        if (faults.refuse) throw new Error("the parent's object is unreachable (injected)");
        await real.get(id).childSettled(childSession);
        faults.delivered++;
        if (faults.loseAnswers > 0) {
          faults.loseAnswers--;
          throw new Error("the parent's answer was lost on the way back (injected)");
        }
      },
    }),
  };
  setSessionEnv(child, { SESSIONS });
  return faults;
}

/** Poll until `check` holds (bounded: the child's alarm retries 1 s, then 2 s, 4 s… apart). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

/** The child's stored record: its result and the wake-up it still owes (test/support/session-probe.ts). */
const childRecord = async (child: string) => (await sessionProbe(child).storageGet(`tool:swarm:child:swarm:${child}`)) as any;

/** A parent turn parked on one child that answers at once; `faults` is set before the child starts. */
async function parkedOnOneChild(text: string, faultsOf: (f: ReturnType<typeof wakeFaults>) => void) {
  const session = sessionId();
  const answer = await script([{ text }]);
  const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
  const child = childSessionId(session, turnId, 1);
  const faults = wakeFaults(child);
  faultsOf(faults);
  const r = await exec(session, turnId, `const x = await agents.run({ prompt: "${answer.marker} go", label: "only" }); return x.text;`);
  return { session, turnId, child, faults, r };
}

describe("Swarm: a child's wake-up is retried by its alarm until the parent takes it", () => {
  it("the parent's object refuses the wake-ups: the parked parent waits, then resumes once a retry lands", async () => {
    const { session, turnId, child, faults, r } = await parkedOnOneChild("late but here", (f) => (f.refuse = true));
    expect(r.status).toBe("waiting");
    // The child stored its answer with the wake-up it owes, and its alarm tried again (still refused).
    await until("the child's alarm retried the wake-up", () => faults.tries >= 2);
    expect((await childRecord(child)).wake).toMatchObject({ parentSessionId: session, childSessionId: child });
    expect(faults.delivered).toBe(0);
    // Nobody told the parent: its run is still parked.
    expect(await wait(session, turnId, r.runId)).toMatchObject({ status: "waiting" });

    faults.refuse = false;
    expect(await settleRun(session, turnId, r)).toMatchObject({ status: "completed", value: "late but here" });
    expect(faults.delivered).toBe(1);
    // Taken: the child owes nothing more, and keeps its answer.
    await until("the child dropped the owed wake-up", async () => (await childRecord(child)).wake === undefined);
    expect((await childRecord(child)).result).toMatchObject({ status: "completed", text: "late but here" });
  });

  it("the child's object is evicted after storing its answer and failing to tell: its next incarnation's alarm tells the parent", async () => {
    const { session, turnId, child, faults, r } = await parkedOnOneChild("stored before told", (f) => (f.refuse = true));
    expect(r.status).toBe("waiting");
    await until("the child's first wake-up failed and was recorded", async () => (await childRecord(child))?.wake?.attempts >= 1);
    // Whatever the child's incarnation held in memory goes; only storage and its alarm remain.
    await evictDurableObject(sessionStub(child));
    faults.refuse = false;
    expect(await settleRun(session, turnId, r)).toMatchObject({ status: "completed", value: "stored before told" });
    expect(faults.delivered).toBeGreaterThanOrEqual(1);
  });

  it("a wake-up retried after the parent already took it changes nothing: the child shows once in the parent's result and trajectory", async () => {
    const { session, turnId, child, faults, r } = await parkedOnOneChild("just once", (f) => (f.loseAnswers = 1));
    const done = await settleRun(session, turnId, r);
    expect(done).toMatchObject({ status: "completed", value: "just once" });
    // The child saw its first wake-up fail, so its alarm delivered it again.
    await until("the retried wake-up reached the parent", () => faults.delivered >= 2);
    await until("the child dropped the owed wake-up", async () => (await childRecord(child)).wake === undefined);
    // The wake-up's alarm shares the object's alarm with idle expiry: the expiry alarm is armed again after it.
    await until("the child's idle-expiry alarm is armed", async () => ((await sessionProbe(child).storageAlarm()) ?? 0) > Date.now() + 60_000);

    expect(await footprint(session)).toMatchObject({ runs: 0 });
    const t = (await trajectory(session, turnId)).json;
    const spawns = t.calls.flatMap((c: any) => c.nested).filter((n: any) => n.tool === "sessions_spawn");
    expect(spawns).toHaveLength(1);
    expect(t.subAgents).toMatchObject({ count: 1 });
    expect(t.subAgents.children.map((c: any) => [c.sessionId, c.status])).toEqual([[child, "completed"]]);
    // The run that completed answers nothing more: a second resume finds no parked run.
    const again = await wait(session, turnId, r.runId);
    expect(again.status).not.toBe("completed");
  });
});
