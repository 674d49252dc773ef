import { describe, expect, it } from "vitest";
import { exec, openTurn, sessionId, settleRun } from "./helpers";
import { script } from "./chat-helpers";

// Swarm (issue 27, "Accounting"): once a turn has started a sub-agent, the code-mode telemetry of
// its exec/wait results carries the children's aggregates (no ids: the trajectory lists them);
// every other result keeps exactly the seed's telemetry fields.

const MODEL = "fakeoai/gpt-fake";
const SEED_FIELDS = ["catalogSize", "catalogSources", "controlTools", "counterScope", "counters"];

describe("Swarm: sub-agents in the parent's code-mode telemetry", () => {
  it("a cell that ran two children (one failing) reports count 2, 1 completed, 1 failed; a cell before it has no subAgents key", async () => {
    const session = sessionId();
    const good = await script([{ text: "fine", usage: { input: 10, output: 5 } }]);
    const bad = await script([{ error: { status: 400, message: "the model refused" } }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });

    const before = await exec(session, turnId, `return 1;`);
    expect(before.status).toBe("completed");
    expect(Object.keys(before.telemetry).sort()).toEqual(SEED_FIELDS);

    const r = await exec(
      session,
      turnId,
      `return (await agents.run([{ prompt: "${good.marker} g", label: "good" }, { prompt: "${bad.marker} b", label: "bad" }])).map((x) => x.status);`,
    );
    const done = await settleRun(session, turnId, r);
    expect(done).toMatchObject({ status: "completed", value: ["completed", "failed"] });
    expect(done.telemetry.subAgents).toMatchObject({ count: 2, running: 0, completed: 1, failed: 1, assistantTurns: 1 });
    // The completed child reported a cost (the fake model has cost data); no ids in telemetry.
    expect(done.telemetry.subAgents.costUsd).toBeGreaterThan(0);
    expect(JSON.stringify(done.telemetry)).not.toContain(`${session}.sub-`);

    // Later cells of the same turn keep reporting the turn's children.
    const after = await exec(session, turnId, `return 2;`);
    expect(after.telemetry.subAgents).toMatchObject({ count: 2, completed: 1, failed: 1 });
  });

  it("children whose model has no cost data leave costUsd out", async () => {
    const session = sessionId();
    const child = await script([{ text: "free", usage: { input: 3, output: 2 } }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(session, turnId, `return (await agents.run({ prompt: "${child.marker} x", model: "fakeoai/gpt-fake-nocost" })).status;`);
    const done = await settleRun(session, turnId, r);
    expect(done).toMatchObject({ status: "completed", value: "completed" });
    expect(done.telemetry.subAgents).toEqual({ count: 1, running: 0, completed: 1, failed: 0, assistantTurns: 1 });
  });

  it("a turn with Swarm on that starts no sub-agent keeps exactly the seed's telemetry in exec and wait results", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(session, turnId, `await yield_control(); return "resumed";`);
    expect(r.status).toBe("waiting");
    expect(Object.keys(r.telemetry).sort()).toEqual(SEED_FIELDS);
    const done = await settleRun(session, turnId, r);
    expect(done).toMatchObject({ status: "completed", value: "resumed" });
    expect(Object.keys(done.telemetry).sort()).toEqual(SEED_FIELDS);
  });
});
