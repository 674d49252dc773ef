import { describe, expect, it } from "vitest";
import { api, exec, openTurn, sessionId, settleRun } from "./helpers";
import { chat, requests, script, trajectory, user } from "./chat-helpers";
import { fakeProviderUrl } from "../support/fake-provider-client";

// Swarm (seed 002, "Use Swarm for agent fan-out"): agents.run() in a cell starts sub-agents, each a
// /chat agent turn in its own session object, through the native sessions_spawn tool. The parent
// model and every child are scripted on the wire-format provider fake; a child finds its script by
// the marker its prompt carries.

const MODEL = "fakeoai/gpt-fake";

/** A child's task: its script's marker, then what it is asked. */
const task = (marker: string, label: string) => ({ prompt: `${marker} ${label}`, label });

describe("Swarm: agents.run fans out to sub-agents", () => {
  it("a 4-way fan-out runs all four children at once and collects every answer through /chat", async () => {
    const session = sessionId();
    const barrier = { name: `fanout-${session}`, count: 4 };
    // Each child's only model call is held until all four reached the fake provider.
    const children = await Promise.all([0, 1, 2, 3].map((i) => script([{ barrier, text: `answer ${i}`, usage: { input: 10, output: 5 } }])));
    const code =
      `phase("fan out");\n` +
      `log("starting", 4);\n` +
      `const rs = await agents.run(${JSON.stringify(children.map((c, i) => task(c.marker, `child ${i}`)))});\n` +
      `return rs.map((r) => ({ status: r.status, text: r.text, label: r.label, sessionId: r.sessionId, turnId: r.turnId, turns: r.meta.assistantTurns }));`;
    const parent = await script([{ toolCalls: [{ id: "c1", name: "exec", input: { code } }] }, { text: "all done" }]);
    const r = await chat(session, { model: MODEL, agentId: "swarm", messages: user(parent.marker) });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "completed", message: { content: "all done" } });

    const [, second] = await requests(parent.id);
    const result = JSON.parse(JSON.stringify(second!.body.messages.find((m: any) => m.role === "tool").content));
    const value = JSON.parse(typeof result === "string" ? result : JSON.stringify(result));
    const rows = (typeof value.value === "object" ? value.value : value) as any[];
    expect(rows.map((x) => x.text)).toEqual(["answer 0", "answer 1", "answer 2", "answer 3"]);
    expect(rows.every((x) => x.status === "completed" && x.turns === 1 && typeof x.turnId === "string")).toBe(true);
    // Four distinct child sessions, derived from the parent's session, turn and index.
    expect(new Set(rows.map((x) => x.sessionId)).size).toBe(4);
    for (const x of rows) expect(x.sessionId.startsWith(`${session}.sub-`)).toBe(true);
    // No child request waited past the barrier: all four were in flight at once.
    for (const c of children) {
      const [req] = await requests(c.id);
      expect(req!.problems).toEqual([]);
    }
    // Each child is an ordinary turn of the same tenant: its own trajectory is readable.
    const childTrajectory = await trajectory(rows[0].sessionId, rows[0].turnId);
    expect(childTrajectory.status).toBe(200);
    // The parent's trajectory shows the phase, the log record and each sub-agent under the cell.
    const t = JSON.stringify((await trajectory(session, r.json.turnId)).json);
    expect(t).toContain("fan out");
    expect(t).toContain("starting");
    for (const x of rows) expect(t).toContain(x.sessionId);
  });

  it("a failed child is a value: its siblings' answers arrive and the cell goes on", async () => {
    const session = sessionId();
    const good = await script([{ text: "fine" }]);
    const bad = await script([{ error: { status: 400, message: "the model refused" } }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(
      session,
      turnId,
      `const rs = await agents.run([${JSON.stringify(task(good.marker, "good"))}, ${JSON.stringify(task(bad.marker, "bad"))}]);\n` +
        `return rs.map((x) => ({ status: x.status, text: x.text, label: x.label, failed: typeof x.error === "string" }));`,
    );
    const done = await settleRun(session, turnId, r);
    expect(done).toMatchObject({
      status: "completed",
      value: [
        { status: "completed", text: "fine", label: "good", failed: false },
        { status: "failed", text: "", label: "bad", failed: true },
      ],
    });
  });

  it("the parent cell parks while its children run and wait resumes it with their answers", async () => {
    const session = sessionId();
    // The child answers only once a second request reaches the barrier, which the test sends after the park.
    const barrier = { name: `park-${session}`, count: 2 };
    const child = await script([{ barrier, text: "late answer" }]);
    const gate = await script([{ barrier, text: "gate" }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(session, turnId, `const x = await agents.run(${JSON.stringify(task(child.marker, "slow"))}); return x.text;`);
    expect(r.status).toBe("waiting");
    // Release the child: another session's /chat reaches the same barrier.
    const released = await chat(sessionId(), { model: MODEL, agentId: "off", messages: user(gate.marker) });
    expect(released.json).toMatchObject({ status: "completed" });
    expect(await settleRun(session, turnId, r)).toMatchObject({ status: "completed", value: "late answer" });
  });

  it("deleting the parent turn cancels its running children", async () => {
    const session = sessionId();
    const child = await script([{ hangMs: 60_000, text: "never" }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(session, turnId, `await agents.run(${JSON.stringify(task(child.marker, "hangs"))}); return 1;`);
    expect(r.status).toBe("waiting");
    // The child's model call is in flight before the parent goes.
    for (let i = 0; i < 200 && (await fetchCount(child.id)) === 0; i++) await new Promise((res) => setTimeout(res, 10));
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    const [req] = await requests(child.id);
    expect(req!.aborted).toBe(true);
  });

  it("a child never gets a tool its parent is denied, and cannot start sub-agents itself", async () => {
    const session = sessionId();
    const child = await script([{ text: "ok" }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL, deny: ["notes_*"] });
    const r = await exec(session, turnId, `return (await agents.run(${JSON.stringify({ prompt: `${child.marker} look`, allow: ["*"] })})).status;`);
    expect(await settleRun(session, turnId, r)).toMatchObject({ status: "completed", value: "completed" });
    const [req] = await requests(child.id);
    // The child turn's code-mode exec description lists its tools: never a denied one or a Swarm tool.
    const offered = JSON.stringify(req!.body.tools);
    expect(offered).toContain("echo");
    expect(offered).not.toContain("notes_write");
    expect(offered).not.toContain("sessions_spawn");
    expect(offered).not.toContain("agents.run");
  });
});

describe("Swarm: when the globals are visible", () => {
  const probe = `return { agents: typeof agents, phase: typeof phase, log: typeof log, files: (await API.list()).map((f) => f.path) };`;

  it("with Swarm on and sessions_spawn allowed: agents, phase, log and agents.d.ts, named in the exec description", async () => {
    const session = sessionId();
    const turn = await api("POST", `/v1/sessions/${session}/turns`, { agentId: "swarm", model: MODEL });
    const execTool = turn.json.tools.find((t: any) => t.name === "exec");
    expect(execTool.description).toContain("agents.run");
    const r = await exec(session, turn.json.turnId, probe + "");
    expect(r).toMatchObject({ status: "completed", value: { agents: "object", phase: "function", log: "function", files: ["agents.d.ts"] } });
    const dts = await exec(session, turn.json.turnId, `return await API.read("agents.d.ts");`);
    expect(dts.value).toContain("declare namespace agents");
  });

  it.each([
    ["tools.swarm: false (the test config's global setting)", { agentId: "park" }],
    ["tools.swarm.enabled: false under the agent", { agentId: "swarmoff" }],
    ["sessions_spawn denied", { agentId: "swarm", deny: ["sessions_spawn"] }],
  ])("%s hides the globals, agents.d.ts and the exec description's mention", async (_, body) => {
    const session = sessionId();
    const turn = await api("POST", `/v1/sessions/${session}/turns`, { ...body, model: MODEL });
    const execTool = turn.json.tools.find((t: any) => t.name === "exec");
    expect(execTool.description).not.toContain("agents.run");
    const r = await exec(session, turn.json.turnId, probe);
    expect(r).toMatchObject({ status: "completed", value: { agents: "undefined", phase: "undefined", log: "undefined", files: [] } });
  });

  it("with code mode off, sessions_spawn and agents_wait are direct tools: spawn, then collect", async () => {
    const session = sessionId();
    const child = await script([{ text: "direct answer" }]);
    const turnId = await openTurn(session, { agentId: "swarmtools", model: MODEL });
    const spawned = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/sessions_spawn`, { prompt: `${child.marker} hi`, label: "d" });
    expect(spawned.status).toBe(200);
    const handle = spawned.json.result ?? spawned.json;
    const value = handle.value ?? handle;
    expect(value).toMatchObject({ status: "running", label: "d" });
    const collected = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/agents_wait`, { sessionIds: [value.sessionId] });
    const out = collected.json.result ?? collected.json;
    expect(JSON.stringify(out)).toContain("direct answer");
  });
});

/** Requests that reached a script so far, ended or not. */
async function fetchCount(id: string): Promise<number> {
  const res = await fetch(`${fakeProviderUrl()}/__scripts/${id}/arrived`);
  return ((await res.json()) as { arrived: number }).arrived;
}
