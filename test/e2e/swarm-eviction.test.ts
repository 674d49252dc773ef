import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { exec, openTurn, sessionId, sessionStub, settleRun } from "./helpers";
import { chat, script, user } from "./chat-helpers";

// Swarm (issue 27, "Durable waiting"): a child runs detached from the parent's call, in its own
// session object, and stores its answer there; the parent collects it by ids it stored first. So
// the parent's object can be evicted while its cell is parked on children and lose nothing.

const MODEL = "fakeoai/gpt-fake";

describe("Swarm: the parent's eviction while children run", () => {
  it("a cell parked on two children survives the parent's eviction: wait collects both answers", async () => {
    const session = sessionId();
    // Both children's model calls are held until a third request (sent after the eviction) arrives.
    const barrier = { name: `evict-${session}`, count: 3 };
    const a = await script([{ barrier, text: "answer a" }]);
    const b = await script([{ barrier, text: "answer b" }]);
    const gate = await script([{ barrier, text: "gate" }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(
      session,
      turnId,
      `const rs = await agents.run([{ prompt: "${a.marker} a", label: "a" }, { prompt: "${b.marker} b", label: "b" }]);\n` +
        `return rs.map((x) => ({ status: x.status, text: x.text, label: x.label, error: x.error }));`,
    );
    expect(r.status).toBe("waiting");
    await evictDurableObject(sessionStub(session));
    // The children are still running in their own objects: release them.
    const released = await chat(sessionId(), { model: MODEL, agentId: "off", messages: user(gate.marker) });
    expect(released.json).toMatchObject({ status: "completed" });
    expect(await settleRun(session, turnId, r)).toMatchObject({
      status: "completed",
      value: [
        { status: "completed", text: "answer a", label: "a" },
        { status: "completed", text: "answer b", label: "b" },
      ],
    });
  });
});
