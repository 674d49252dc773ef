import { describe, expect, it } from "vitest";
import { exec, openTurn, sessionId, settleRun } from "./helpers";
import { requests, script, toolResults } from "./chat-helpers";

// Swarm (issue 27, "depth is bounded"): children start no children of their own unless
// tools.swarm.maxDepth (1 by default, at most 3) allows it. The depth travels with each child's
// request from its parent, never from a model or a client, and the top-level turn's setting
// governs the whole tree: a child whose own agent allows more cannot go deeper.

const MODEL = "fakeoai/gpt-fake";
const probe = `return [typeof agents, typeof phase, typeof log, typeof sessions_spawn, (await API.list()).map((f) => f.path)];`;

describe("Swarm: sub-agent depth", () => {
  it("maxDepth 2 lets a child start a grandchild; the grandchild has no Swarm tools or globals", async () => {
    const session = sessionId();
    const grand = await script([{ toolCalls: [{ id: "g1", name: "exec", input: { code: probe } }] }, { text: "grand done" }]);
    const childCode =
      `const g = await agents.run({ prompt: "${grand.marker} go", agentId: "swarmdeep", label: "grand" });\n` +
      `return [g.status, g.text, g.sessionId];`;
    const child = await script([{ toolCalls: [{ id: "c1", name: "exec", input: { code: childCode } }] }, { text: "child done" }]);
    const turnId = await openTurn(session, { agentId: "swarmdeep", model: MODEL });
    const r = await exec(
      session,
      turnId,
      `const c = await agents.run({ prompt: "${child.marker} go", agentId: "swarmdeep" }); return [c.status, c.text, c.sessionId];`,
    );
    const done = await settleRun(session, turnId, r);
    expect(done.status).toBe("completed");
    expect(done.value.slice(0, 2)).toEqual(["completed", "child done"]);
    const childSession: string = done.value[2];

    // The child (depth 1 of 2) was offered the Swarm globals, and its cell ran the grandchild.
    const [childFirst, childSecond] = await requests(child.id);
    expect(JSON.stringify(childFirst!.body.tools)).toContain("agents.run");
    const childCell = JSON.parse(toolResults(childSecond!)[0]!.content);
    expect(JSON.stringify(childCell)).toContain("grand done");
    expect(JSON.stringify(childCell)).toContain(`${childSession}.sub-`);

    // The grandchild (depth 2 of 2): no sessions_spawn in its catalog, no Swarm globals in its cells.
    const [grandFirst, grandSecond] = await requests(grand.id);
    const offered = JSON.stringify(grandFirst!.body.tools);
    expect(offered).not.toContain("sessions_spawn");
    expect(offered).not.toContain("agents.run");
    const grandCell = JSON.parse(toolResults(grandSecond!)[0]!.content);
    expect(JSON.stringify(grandCell)).toContain(JSON.stringify(["undefined", "undefined", "undefined", "undefined", []]));
  });

  it("by default (maxDepth 1) a child has no sessions_spawn, even when its own agent allows more depth", async () => {
    const session = sessionId();
    const child = await script([{ text: "ok" }]);
    // "swarm": the default depth; the child's agent "swarmdeep" says 2, which cannot raise its parent's tree.
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(session, turnId, `return (await agents.run({ prompt: "${child.marker} look", agentId: "swarmdeep" })).status;`);
    expect(await settleRun(session, turnId, r)).toMatchObject({ status: "completed", value: "completed" });
    const [req] = await requests(child.id);
    const offered = JSON.stringify(req!.body.tools);
    expect(offered).toContain("exec");
    expect(offered).not.toContain("sessions_spawn");
    expect(offered).not.toContain("agents.run");
  });
});
