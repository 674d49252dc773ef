import { describe, expect, it } from "vitest";
import { api, exec, openTurn, sessionId, settleRun } from "./helpers";
import { arrived, chat, script, trajectory, user } from "./chat-helpers";

// Swarm (issue 27, "Accounting" and "Trajectory tree"): the parent turn's trajectory rolls up its
// sub-agents (assistant turns, usage, cost) and lists each one: label, child session and turn
// ids, status, duration, cost and the link to its own trajectory.

const MODEL = "fakeoai/gpt-fake";

describe("Swarm: the parent's trajectory rolls up its sub-agents", () => {
  it("lists every child with its ids, status, duration and link, and sums their turns and usage", async () => {
    const session = sessionId();
    const good = await script([{ text: "fine", usage: { input: 10, output: 5 } }]);
    const bad = await script([{ error: { status: 400, message: "the model refused" } }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(
      session,
      turnId,
      `return (await agents.run([{ prompt: "${good.marker} g", label: "good" }, { prompt: "${bad.marker} b", label: "bad" }])).length;`,
    );
    expect(await settleRun(session, turnId, r)).toMatchObject({ status: "completed", value: 2 });

    const t = (await trajectory(session, turnId)).json;
    expect(t.subAgents).toMatchObject({ count: 2, assistantTurns: 1, usage: { inputTokens: 10, outputTokens: 5 } });
    expect(typeof t.subAgents.costUsd).toBe("number");
    const [g, b] = t.subAgents.children;
    expect(g).toMatchObject({ label: "good", status: "completed", assistantTurns: 1 });
    expect(b).toMatchObject({ label: "bad", status: "failed" });
    expect(b.error).toContain("the model refused");
    for (const child of [g, b]) {
      expect(child.sessionId.startsWith(`${session}.sub-`)).toBe(true);
      expect(child.durationMs).toBeGreaterThanOrEqual(0);
    }
    // The link reaches the child's own trajectory.
    expect(g.trajectory).toBe(`/v1/sessions/${g.sessionId}/turns/${g.turnId}/trajectory`);
    const own = await api("GET", g.trajectory);
    expect(own.status).toBe(200);
    expect(own.json.turnId).toBe(g.turnId);
  });

  it("phase(name) groups what follows: later records under the launching cell carry its id and name until the next phase", async () => {
    const session = sessionId();
    const child = await script([{ text: "found" }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(
      session,
      turnId,
      `log("before");\nphase("research");\nconst x = await agents.run({ prompt: "${child.marker} r", label: "r1" });\nlog("mid");\nphase("write");\nawait log("after");\nreturn x.status;`,
    );
    expect(await settleRun(session, turnId, r)).toMatchObject({ status: "completed", value: "completed" });
    const t = (await trajectory(session, turnId)).json;
    const nested = t.calls.flatMap((c: any) => c.nested) as any[];
    const rows = nested.map((n) => ({ tool: n.tool, phase: n.phase?.name ?? null, id: n.phase?.id ?? null }));
    expect(rows).toEqual([
      { tool: "log", phase: null, id: null },
      { tool: "phase", phase: "research", id: 1 },
      { tool: "sessions_spawn", phase: "research", id: 1 },
      { tool: "log", phase: "research", id: 1 },
      { tool: "phase", phase: "write", id: 2 },
      { tool: "log", phase: "write", id: 2 },
    ]);
    // The sub-agent's record under the cell names its label and child session.
    const spawn = nested.find((n) => n.tool === "sessions_spawn");
    expect(spawn.result).toContain("r1");
    expect(spawn.result).toContain(`${session}.sub-`);
  });

  it("the /chat answer's meta rolls up the children: count, assistant turns and usage, apart from the parent's own", async () => {
    const session = sessionId();
    const kids = await Promise.all([1, 2].map((i) => script([{ text: `kid ${i}`, usage: { input: 100 * i, output: 10 * i } }])));
    const code = `return (await agents.run(${JSON.stringify(kids.map((k, i) => ({ prompt: `${k.marker} k`, label: `k${i}` })))})).map((r) => r.text);`;
    const parent = await script([
      { toolCalls: [{ id: "c1", name: "exec", input: { code } }], usage: { input: 7, output: 1 } },
      { text: "done", usage: { input: 7, output: 1 } },
    ]);
    const r = await chat(session, { model: MODEL, agentId: "swarm", messages: user(parent.marker) });
    expect(r.json).toMatchObject({ status: "completed", meta: { assistantTurns: 2, usage: { inputTokens: 14, outputTokens: 2 } } });
    expect(r.json.meta.subAgents).toMatchObject({ count: 2, assistantTurns: 2, usage: { inputTokens: 300, outputTokens: 30 } });
    expect(r.json.meta.subAgents.children.map((c: any) => [c.label, c.status])).toEqual([
      ["k0", "completed"],
      ["k1", "completed"],
    ]);
  });

  it("a child still running is listed with its label", async () => {
    const session = sessionId();
    const slow = await script([{ hangMs: 60_000, text: "never" }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(session, turnId, `await agents.run({ prompt: "${slow.marker} s", label: "slow one" }); return 1;`);
    expect(r.status).toBe("waiting");
    for (let i = 0; i < 200 && (await arrived(slow.id)) === 0; i++) await new Promise((res) => setTimeout(res, 10));
    const t = (await trajectory(session, turnId)).json;
    expect(t.subAgents.children).toEqual([{ label: "slow one", sessionId: expect.stringMatching(/\.sub-/), status: "running", assistantTurns: 0 }]);
    // Cancels the child's model call.
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
  });

  it("a turn that started no sub-agents has no subAgents entry", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    await exec(session, turnId, "return 1;");
    expect((await trajectory(session, turnId)).json.subAgents).toBeUndefined();
  });
});
