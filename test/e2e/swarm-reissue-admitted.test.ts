import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { childSessionId } from "../../src/swarm";
import { openTurn, sessionId, sessionProbe, sessionStub, settleRun, wait } from "./helpers";
import { arrived, chat, script, user } from "./chat-helpers";
import { decide, listApprovals, pendingApprovals, startExec } from "./approval-helpers";

// Swarm (issue 27, "eviction of the parent … loses nothing"): a sessions_spawn call in flight when the
// parent's object restarts is issued again and re-attaches to its child. That is the same call, not a
// new one: an operator who approved it is not asked again, and the child runs once.

const MODEL = "fakeoai/gpt-fake";

/** Poll until `check` holds (bounded). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

describe("Swarm: a spawn re-issued after the parent's eviction", () => {
  it("an approved spawn re-attaches after the eviction without a second approval; the child runs once", async () => {
    const session = sessionId();
    const barrier = { name: `reissue-${session}`, count: 2 };
    const slow = await script([{ barrier, text: "approved once" }]);
    const gate = await script([{ barrier, text: "gate" }]);
    const turnId = await openTurn(session, { agentId: "swarmapprove", model: MODEL });
    const child = childSessionId(session, turnId, 1);
    const running = startExec(session, turnId, `const x = await agents.run({ prompt: "${slow.marker} go" }); return x.text;`);
    const [pending] = await pendingApprovals(session);
    expect(pending).toMatchObject({ tool: "sessions_spawn" });
    expect((await decide(session, pending!.approvalId, "allow")).status).toBe(200);
    const r = (await running).json;
    expect(r.status).toBe("waiting");
    // The child's model call is in flight (held): the spawn is running when the parent goes.
    await until("the child's model call arrived", async () => (await arrived(slow.id)) === 1);

    await evictDurableObject(sessionStub(session));
    // The new incarnation resumes the run and re-issues the spawn: no approval is asked for it.
    const resumed = await wait(session, turnId, r.runId);
    expect(await listApprovals(session)).toEqual([]);
    const released = await chat(sessionId(), { model: MODEL, agentId: "off", messages: user(gate.marker) });
    expect(released.json).toMatchObject({ status: "completed" });
    expect(await settleRun(session, turnId, resumed)).toMatchObject({ status: "completed", value: "approved once" });
    expect(await listApprovals(session)).toEqual([]);
    // One child, one model call, one turn in its session.
    expect(await arrived(slow.id)).toBe(1);
    expect(await sessionProbe(child).storageRows("SELECT turn_id FROM turns")).toHaveLength(1);
  });
});
