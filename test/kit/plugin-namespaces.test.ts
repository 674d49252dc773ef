import { describe, expect, it } from "vitest";
import { createGateway } from "../../src/gateway";
import { defineToolPlugin } from "../../src/tools";
import { api, exec, freshTurn, openTurn, sessionId, settleRun, wait } from "../e2e/helpers";
import { decide, pendingApprovals, startExec } from "../e2e/approval-helpers";

// Plugin namespaces (issue 23; seed 002 `namespaces`): the kit's `kit-issues` plugin
// (test/kit/namespace-plugin.ts) registers `Issues` = { list: issues_list, get: issues_get, close: issues_close }.

const trajectory = async (session: string, turnId: string) => (await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`)).json;

async function execDescription(body: Record<string, unknown> = {}): Promise<string> {
  const r = await api("POST", `/v1/sessions/${sessionId()}/turns`, body);
  expect(r.status).toBe(201);
  return r.json.tools.find((t: { name: string }) => t.name === "exec").description;
}

/** What a cell sees of the namespace when it is hidden or shown. */
const PROBE = "return { global: typeof Issues, viaMap: typeof namespaces.Issues, keys: Object.keys(namespaces), tool: typeof issues_list };";

describe("a plugin namespace in a cell", () => {
  it("Issues.list() and namespaces.Issues.list() both run issues_list; the trajectory records each under the tool's name", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const open = await Issues.list({ state: "open" });
       const alsoOpen = await namespaces.Issues.list({ state: "open" });
       const one = await Issues.get({ number: 2 });
       const all = await Issues.list();
       return { count: open.length, alsoCount: alsoOpen.length, title: one.title, all: all.length, same: Issues === namespaces.Issues };`,
    );
    expect(r).toMatchObject({ status: "completed", value: { count: 2, alsoCount: 2, title: "Document namespaces", all: 3, same: true } });
    expect(r.telemetry.counters.call).toBe(4);
    const nested = (await trajectory(session, turnId)).calls[0].nested;
    expect(nested.map((n: { tool: string; status: string }) => [n.tool, n.status])).toEqual([
      ["issues_list", "ok"],
      ["issues_list", "ok"],
      ["issues_get", "ok"],
      ["issues_list", "ok"],
    ]);
  });

  it("the exec description names the namespace, its methods and the tools they run", async () => {
    const description = await execDescription();
    expect(description).toContain("Namespaces (also namespaces.<Name>)");
    expect(description).toContain(
      "Issues.list(input) runs issues_list, Issues.get(input) runs issues_get, Issues.close(input) runs issues_close. The test tracker's issues.",
    );
  });

  it('API.read("namespaces.d.ts") declares each method with the input and output types of the tool it runs', async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, 'return { files: (await API.list()).map((f) => f.path), dts: await API.read("namespaces.d.ts") };');
    expect(r.value.files).toContain("namespaces.d.ts");
    const dts: string = r.value.dts;
    expect(dts).toContain("/** The test tracker's issues. */\ndeclare namespace Issues {");
    expect(dts).toContain("Runs issues_get. Get one issue by number");
    expect(dts).toMatch(/function get\(input: \{\s*number: number;?\s*\}\): Promise<\{/);
    expect(dts).toMatch(/function list\(input\?: \{/);
    expect(dts).toContain("function close(input: ");
  });

  it("a method's input is checked and its errors are thrown exactly as the tool's own", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const msg = async (p) => { try { await p; return "ran"; } catch (e) { return e.message; } };
       return [await msg(Issues.get({ number: "two" })), await msg(issues_get({ number: "two" })),
               await msg(Issues.get({ number: 99 })), await msg(issues_get({ number: 99 }))];`,
    );
    expect(r.status).toBe("completed");
    const [viaNs, direct, missingNs, missing] = r.value;
    expect(viaNs).toMatch(/^invalid input for issues_get/);
    expect(viaNs).toBe(direct);
    expect(missingNs).toBe("issue 99 not found");
    expect(missing).toBe(missingNs);
  });
});

describe("a namespace appears only when every tool it needs is visible and its plugin's", () => {
  it("shown by default: the global, namespaces.Issues and its name in Object.keys(namespaces)", async () => {
    const { session, turnId } = await freshTurn();
    expect((await exec(session, turnId, PROBE)).value).toEqual({ global: "object", viaMap: "object", keys: ["Issues"], tool: "function" });
  });

  it("a denied method tool hides it: no global, namespaces.Issues undefined, no prompt text; the other tools stay", async () => {
    const { session, turnId } = await freshTurn({ deny: ["issues_close"] });
    expect((await exec(session, turnId, PROBE)).value).toEqual({ global: "undefined", viaMap: "undefined", keys: [], tool: "function" });
    expect((await exec(session, turnId, "return (await API.list()).map((f) => f.path)")).value).not.toContain("namespaces.d.ts");
    const description = await execDescription({ deny: ["issues_close"] });
    expect(description).not.toContain("Issues");
    expect(description).toContain("issues_list(");
  });

  it("an allow list without one of its tools hides it", async () => {
    const { session, turnId } = await freshTurn({ allow: ["issues_list", "issues_close"] });
    expect((await exec(session, turnId, PROBE)).value).toEqual({ global: "undefined", viaMap: "undefined", keys: [], tool: "function" });
    expect(await execDescription({ allow: ["issues_list", "issues_close"] })).not.toContain("Issues.");
  });

  it("a client tool shadowing one of its tools hides it: the namespace never calls a tool its plugin does not own", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "issues_get", description: "the client's own" }] });
    expect((await exec(session, turnId, PROBE)).value).toEqual({ global: "undefined", viaMap: "undefined", keys: [], tool: "function" });
  });

  it("a client tool named like the namespace gets a suffixed callable name; the global stays the namespace", async () => {
    const { session, turnId } = await freshTurn({ clientTools: [{ name: "Issues", description: "the client's tool" }] });
    const r = await exec(
      session,
      turnId,
      "return { list: typeof Issues.list, renamed: catalog.all().filter((h) => h.toolName === 'Issues').map((h) => h.callableName) };",
    );
    expect(r.value.list).toBe("function");
    expect(r.value.renamed).toEqual([expect.stringMatching(/^Issues_[0-9a-f]{4,}$/)]);
  });
});

describe("policy applies through the namespace as to the tool", () => {
  it("before_tool_call hooks see the call under the tool's name, nested", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { channel: "ns" });
    await exec(session, turnId, "return await Issues.get({ number: 1 })");
    const log = (await exec(session, turnId, "return await kit_hook_log({})")).value as Array<Record<string, unknown>>;
    const mine = log.filter((e) => e.turnId === turnId && e.kind === "tool");
    expect(mine.slice(0, 2)).toEqual([
      expect.objectContaining({ hook: "before", tool: "issues_get", nested: true }),
      expect.objectContaining({ hook: "after", tool: "issues_get", ok: true }),
    ]);
  });

  it("an approval-gated tool asks the operator through the namespace; deny fails the call exactly as a direct call's, allow runs it", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, {});
    const code = (call: string) => `try { return await ${call}({ number: 3 }); } catch (e) { return e.message; }`;
    const denied = startExec(session, turnId, code("Issues.close"));
    const [p] = await pendingApprovals(session);
    expect(p!.tool).toBe("issues_close");
    await decide(session, p!.approvalId, "deny");
    const viaNs = (await denied).json.value;
    expect(viaNs).toBe("issues_close was denied by the operator");

    const direct = startExec(session, turnId, code("issues_close"));
    const [q] = await pendingApprovals(session);
    await decide(session, q!.approvalId, "deny");
    expect((await direct).json.value).toBe(viaNs);

    const allowed = startExec(session, turnId, code("namespaces.Issues.close"));
    const [a] = await pendingApprovals(session);
    await decide(session, a!.approvalId, "allow");
    expect((await allowed).json).toMatchObject({ status: "completed", value: { closed: 3 } });
  });
});

describe("a namespace call parks and resumes", () => {
  it("a slow method parks the cell (pendingToolCalls names the tool); wait resumes it and the namespace still works after the restore", async () => {
    const { session, turnId } = await freshTurn({ agentId: "park" });
    const r = await exec(
      session,
      turnId,
      "text('before'); const slow = await Issues.list({ delayMs: 600 }); const one = await namespaces.Issues.get({ number: 1 }); return [slow.length, one.title];",
    );
    expect(r).toMatchObject({ status: "waiting", reason: "pending_tools", output: [{ type: "text", text: "before" }] });
    expect(r.pendingToolCalls).toEqual([{ callId: expect.stringMatching(/^call_/), tool: "issues_list", input: { delayMs: 600 } }]);
    const w = await settleRun(session, turnId, await wait(session, turnId, r.runId));
    expect(w).toMatchObject({ status: "completed", value: [3, "Cells lose output on park"] });
  });
});

describe("hostile guest code against a namespace", () => {
  it("an undeclared method is not a function; protocol names find nothing; the namespace has no prototype", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `let undeclared;
       try { await Issues.remove({ number: 1 }); undeclared = "ran"; } catch (e) { undeclared = e.name + ": " + e.message; }
       return { undeclared, proto: Object.getPrototypeOf(Issues), ctor: typeof Issues.constructor, dunder: typeof Issues.__proto__,
                then: typeof Issues.then, mapProto: Object.getPrototypeOf(namespaces), keys: Object.keys(Issues) };`,
    );
    expect(r.status).toBe("completed");
    expect(r.value).toEqual({
      undeclared: expect.stringMatching(/^TypeError: .*not a function/),
      proto: null,
      ctor: "undefined",
      dunder: "undefined",
      then: "undefined",
      mapProto: null,
      keys: ["list", "get", "close"],
    });
  });

  it("the namespaces map and a namespace are frozen: writes throw a TypeError in strict code, are ignored in sloppy code, and change nothing", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const tries = [
         function () { "use strict"; namespaces.Issues = {}; },
         function () { "use strict"; namespaces.Evil = {}; },
         function () { "use strict"; Issues.list = () => "forged"; },
         function () { "use strict"; delete Issues.get; },
       ];
       const strict = tries.map((f) => { try { f(); return "ok"; } catch (e) { return e.name; } });
       namespaces.Issues = 1; namespaces.Evil = 2; Issues.list = 3;
       return { strict, sloppy: [typeof namespaces.Issues, typeof namespaces.Evil, typeof Issues.list, typeof Issues.get],
                still: (await Issues.list({ state: "closed" })).length };`,
    );
    expect(r.value).toEqual({
      strict: ["TypeError", "TypeError", "TypeError", "TypeError"],
      sloppy: ["object", "undefined", "function", "function"],
      still: 1,
    });
  });

  it("a guest replacing the namespaces global only changes its own view: a forged method reaches no tool", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `namespaces = { Issues: { list: () => "forged" } };
       return { forged: namespaces.Issues.list(), real: (await Issues.list({ state: "open" })).length };`,
    );
    expect(r.value).toEqual({ forged: "forged", real: 2 });
    const nested = (await trajectory(session, turnId)).calls[0].nested;
    expect(nested.map((n: { tool: string }) => n.tool)).toEqual(["issues_list"]);
  });
});

describe("a namespace is one guest global", () => {
  it("two plugins registering the same namespace fail the gateway at start-up", () => {
    const plugin = (id: string) =>
      defineToolPlugin({
        id,
        name: id,
        description: "",
        namespaces: { Issues: { methods: { list: `${id}_list` } } },
        tools: (tool) => [tool({ name: `${id}_list`, description: "", parameters: { type: "object" }, execute: () => [] })],
      });
    expect(() => createGateway({ plugins: [plugin("first"), plugin("second")] })).toThrow(
      "namespace Issues is registered by both plugin first and plugin second",
    );
  });
});
