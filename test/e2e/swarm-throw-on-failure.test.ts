import { describe, expect, it } from "vitest";
import { exec, openTurn, sessionId, settleRun } from "./helpers";
import { arrived, chat, requests, script, user } from "./chat-helpers";

// Swarm (issue 27, "Guest API"): a failed sub-agent is a value unless the cell asks for a throw with
// agents.run(tasks, { throwOnFailure: true }). The throw comes once every task has ended (siblings
// are not cut off), as a plain guest Error naming the first failed task and its error.

const MODEL = "fakeoai/gpt-fake";

describe("Swarm: agents.run(..., { throwOnFailure: true })", () => {
  it("by default a failed child is a value; with throwOnFailure the cell's try/catch gets an Error naming it, once its slower sibling completed", async () => {
    const session = sessionId();
    const good = await script([{ text: "fine" }]);
    const bad = await script([{ error: { status: 400, message: "the model refused" } }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const tasks = (ok: string, ko: string) => `[{ prompt: "${ok} g", label: "good" }, { prompt: "${ko} b", label: "bad" }]`;
    const values = await settleRun(
      session,
      turnId,
      await exec(session, turnId, `return (await agents.run(${tasks(good.marker, bad.marker)})).map((x) => x.status);`),
    );
    expect(values).toMatchObject({ status: "completed", value: ["completed", "failed"] });

    // The sibling answers only once the test releases its barrier, long after the failing task ended.
    const barrier = { name: `throw-${session}`, count: 2 };
    const slow = await script([{ barrier, text: "fine at last" }]);
    const gate = await script([{ barrier, text: "gate" }]);
    const bad2 = await script([{ error: { status: 400, message: "refused twice" } }]);
    const r = await exec(
      session,
      turnId,
      `try { await agents.run(${tasks(slow.marker, bad2.marker)}, { throwOnFailure: true }); return "no throw"; }\n` +
        `catch (e) { return { isError: e instanceof Error, name: e.name, message: e.message, keys: Object.keys(e) }; }`,
    );
    expect(r.status).toBe("waiting");
    for (let i = 0; i < 200 && (await arrived(bad2.id)) === 0; i++) await new Promise((res) => setTimeout(res, 10));
    const released = await chat(sessionId(), { model: MODEL, agentId: "off", messages: user(gate.marker) });
    expect(released.json).toMatchObject({ status: "completed" });
    const done = await settleRun(session, turnId, r);
    expect(done.status).toBe("completed");
    const caught = done.value;
    expect(caught).toMatchObject({ isError: true, name: "Error", keys: [] });
    expect(caught.message).toMatch(/^agents\.run: tasks\[1\] \(label "bad"\) failed: /);
    expect(caught.message).toContain("refused twice");
    expect(caught.message.length).toBeLessThanOrEqual(1000);
    // The call rejected only after the slow sibling answered: all four children ended, two completed.
    expect(done.telemetry.subAgents).toMatchObject({ count: 4, completed: 2, failed: 2, running: 0 });
    const [sibling] = await requests(slow.id);
    expect(sibling!.aborted).toBe(false);
  });

  it("one task: an uncaught rejection fails the cell with the error; a completed task resolves as usual", async () => {
    const session = sessionId();
    const ok = await script([{ text: "yes" }]);
    const ko = await script([{ error: { status: 400, message: "no model today" } }]);
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const fine = await settleRun(
      session,
      turnId,
      await exec(session, turnId, `return (await agents.run("${ok.marker} a", { throwOnFailure: true })).text;`),
    );
    expect(fine).toMatchObject({ status: "completed", value: "yes" });
    const failed = await settleRun(
      session,
      turnId,
      await exec(session, turnId, `await agents.run({ prompt: "${ko.marker} a", label: "solo" }, { throwOnFailure: true }); return "unreached";`),
    );
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain('agents.run: the sub-agent (label "solo") failed: ');
    expect(failed.error).toContain("no model today");
  });

  it("a misspelled option is refused instead of silently returning values", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { agentId: "swarm", model: MODEL });
    const r = await exec(session, turnId, `try { await agents.run("x", { throwOnFailures: true }); } catch (e) { return e.message; }`);
    expect(r).toMatchObject({ status: "completed", value: 'agents.run: unknown option "throwOnFailures"; the only option is throwOnFailure' });
    // Nothing was started.
    expect((await exec(session, turnId, `return 1;`)).telemetry.subAgents).toBeUndefined();
  });
});
