import { describe, expect, it } from "vitest";
import { exec, openTurn, sessionId, settleRun } from "./helpers";
import { requests, script } from "./chat-helpers";

// Swarm (issue 27, "Accounting"): the sub-agents of one turn make at most tools.swarm.maxModelCalls
// model calls together. Each child reserves its share when it starts (its own assistant-turn
// bound) and gives back what it did not use; a spawn with nothing left fails closed, as a value.

const MODEL = "fakeoai/gpt-fake";

describe("Swarm: the per-turn bound on the children's model calls", () => {
  it("a spawn past tools.swarm.maxModelCalls fails with a clear error; calls a finished child did not use are given back", async () => {
    const session = sessionId();
    const a = await script([{ text: "a done" }]);
    const b = await script([{ text: "never" }]);
    const c = await script([{ text: "c done" }]);
    // "swarmcapped": maxModelCalls 3. A holds all 3 while it runs, so B (started with it) gets none;
    // A made 1 call, so C (started after) gets the 2 given back.
    const turnId = await openTurn(session, { agentId: "swarmcapped", model: MODEL });
    const r = await exec(
      session,
      turnId,
      `const [x, y] = await agents.run(["${a.marker} a", "${b.marker} b"]);\n` +
        `const z = await agents.run("${c.marker} c");\n` +
        `return { a: x.status, b: y.status, bError: y.error, c: z.status, cText: z.text };`,
    );
    const done = await settleRun(session, turnId, r);
    expect(done).toMatchObject({ status: "completed", value: { a: "completed", b: "failed", c: "completed", cText: "c done" } });
    expect(done.value.bError).toContain("all 3 model calls of tools.swarm.maxModelCalls");
    // B never reached a model.
    expect(await requests(b.id)).toEqual([]);
  });
});
