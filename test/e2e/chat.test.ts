import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, sessionId, sessionStub, TOKEN_B } from "./helpers";
import { appendSteps, chat, offeredTools, requests, script, toolResults } from "./chat-helpers";

// /chat through the real path: HTTP → session Durable Object → agent loop → provider adapter →
// a local server speaking each vendor's exact wire format (validating every request it gets).

const WIRES = [
  { wire: "openai", model: "fakeoai/gpt-fake", cost: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 } },
  { wire: "anthropic", model: "fakeant/claude-fake", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
] as const;

const USAGE = { input: 1000, output: 200, cacheRead: 400, cacheWrite: 100 };

function costOf(cost: (typeof WIRES)[number]["cost"], calls: number): number {
  return (
    (calls * (USAGE.input * cost.input + USAGE.output * cost.output + USAGE.cacheRead * cost.cacheRead + USAGE.cacheWrite * cost.cacheWrite)) / 1e6
  );
}

const TASK_CODE = [
  'const [list] = await catalog.search("list shipments");',
  "const shipments = await list({});",
  "const heavy = shipments.filter((s) => !s.paid && s.tons > 10);",
  'await notes_write({ key: "heavy", text: heavy.map((s) => s.id).join(",") });',
  'const ok = await ask_user({ question: "Ship " + heavy.length + " unpaid heavy shipments?" });',
  "return { heavy: heavy.map((s) => s.id), approved: ok };",
].join("\n");

describe.each(WIRES)("/chat over the $wire wire format", ({ model, cost }) => {
  it("done-when: searches the catalog, calls two tools in one exec, waits on a client tool across an eviction, resumes and answers", async () => {
    const session = sessionId();
    const s = await script([
      { text: ["Let me check ", "the shipments."], toolCalls: [{ id: "tc_exec", name: "exec", input: { code: TASK_CODE } }], usage: USAGE },
    ]);
    const first = await chat(session, {
      model,
      messages: [
        { role: "system", content: "You are a shipping assistant." },
        { role: "user", content: `${s.marker} Which unpaid heavy shipments should we send?` },
      ],
      clientTools: [
        {
          name: "ask_user",
          description: "Ask the user a yes/no question",
          parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
        },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ status: "waiting", meta: { codeModeEngaged: true, assistantTurns: 1, stopReason: "client_tools" } });
    const [pending] = first.json.pendingToolCalls;
    expect(pending).toMatchObject({ tool: "ask_user", input: { question: expect.stringContaining("Ship") } });
    expect(pending.runId).toMatch(/^cm_/);
    const turnId = first.json.turnId;

    // The model saw exactly exec and wait; the first request was valid for its wire format.
    const [r1] = await requests(s.id);
    expect(r1!.problems).toEqual([]);
    expect(offeredTools(r1!).sort()).toEqual(["exec", "wait"]);

    await evictDurableObject(sessionStub(session));
    const posted = await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: pending.callId, value: true });
    expect(posted.status).toBe(202);
    await evictDurableObject(sessionStub(session));

    await appendSteps(s.id, [
      { toolCalls: [{ id: "tc_wait", name: "wait", input: { runId: pending.runId } }], usage: USAGE },
      { text: "Ship S-2 and S-4: the user approved.", usage: USAGE },
    ]);
    const second = await chat(session, { turnId });
    expect(second.status).toBe(200);
    expect(second.json).toMatchObject({
      turnId,
      status: "completed",
      message: { role: "assistant", content: "Ship S-2 and S-4: the user approved." },
      meta: {
        codeModeEngaged: true,
        assistantTurns: 3,
        toolSummary: { calls: 2, tools: ["exec", "wait"], failures: 0 },
        usage: { inputTokens: 3 * USAGE.input, outputTokens: 3 * USAGE.output, cacheReadTokens: 3 * USAGE.cacheRead },
        stopReason: "final",
      },
    });
    expect(second.json.meta.bridgeCalls).toMatchObject({ search: 1 });
    expect(second.json.meta.bridgeCalls.call).toBeGreaterThanOrEqual(3);
    expect(second.json.meta.costUsd).toBeCloseTo(
      costOf(cost, 3) - (model.startsWith("fakeoai") ? (3 * USAGE.cacheWrite * cost.cacheWrite) / 1e6 : 0),
      9,
    );

    // Provider replay: the waiting exec result, then the completed wait result; nothing synthetic.
    const all = await requests(s.id);
    expect(all).toHaveLength(3);
    for (const r of all) expect(r.problems).toEqual([]);
    const results2 = toolResults(all[1]!);
    expect(results2.map((r) => r.id)).toEqual(["tc_exec"]);
    expect(JSON.parse(results2[0]!.content)).toMatchObject({ status: "waiting", runId: pending.runId, reason: "pending_tools" });
    const results3 = toolResults(all[2]!);
    expect(results3.map((r) => r.id)).toEqual(["tc_exec", "tc_wait"]);
    const waited = JSON.parse(results3[1]!.content);
    expect(waited).toMatchObject({ status: "completed", value: { approved: true } });
    expect(waited.value.heavy.length).toBeGreaterThan(0);

    // Seed E2E step 16: the trajectory shows the nested calls under their parent code-mode call.
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    expect(t.status).toBe(200);
    expect(t.json).toMatchObject({ turnId, codeModeEngaged: true, status: "completed", meta: { assistantTurns: 3 } });
    expect(t.json.calls.map((c: any) => [c.callId, c.tool, c.via, c.status])).toEqual([
      ["tc_exec", "exec", "chat", "waiting"],
      ["tc_wait", "wait", "chat", "completed"],
    ]);
    const nested = t.json.calls[0].nested.map((n: any) => [n.tool, n.source, n.status]);
    expect(nested).toEqual([
      ["shipping_list", "openclaw", "ok"],
      ["notes_write", "openclaw", "ok"],
      ["ask_user", "client", "ok"],
    ]);
    expect(t.json.calls[0].nested[2].invocationId).toBe(pending.callId);
    expect(t.json.snapshots.map((e: any) => e.event)).toEqual(["parked", "resumed", "settled"]);
    expect(t.json.modelCalls).toHaveLength(3);
  });

  it("the same task with code mode off: the model gets every tool directly and the client tool is pending the same way", async () => {
    const session = sessionId();
    const s = await script([
      { toolCalls: [{ id: "d1", name: "shipping_list", input: {} }], usage: USAGE },
      {
        toolCalls: [
          { id: "d2", name: "notes_write", input: { key: "heavy", text: "S-2" } },
          { id: "d3", name: "ask_user", input: { question: "Ship S-2?" } },
        ],
        usage: USAGE,
      },
    ]);
    const first = await chat(session, {
      model,
      agentId: "off",
      messages: [{ role: "user", content: `${s.marker} Which unpaid heavy shipments should we send?` }],
      clientTools: [{ name: "ask_user", description: "Ask the user a yes/no question" }],
    });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "ask_user", input: { question: "Ship S-2?" } }] });
    const d3 = first.json.pendingToolCalls[0];
    expect(d3.runId).toBeUndefined();
    expect(d3.callId).toMatch(/^ccall_/);
    expect(first.json.meta).toMatchObject({ codeModeEngaged: false, assistantTurns: 2, bridgeCalls: { search: 0, describe: 0 } });
    const [r1] = await requests(s.id);
    expect(offeredTools(r1!)).toEqual(expect.arrayContaining(["shipping_list", "shipping_get", "notes_write", "notes_read", "echo", "ask_user"]));
    expect(offeredTools(r1!)).not.toContain("exec");

    const early = await chat(session, { turnId: first.json.turnId });
    expect(early.status).toBe(409);
    expect(early.json.error.message).toContain(d3.callId);

    await evictDurableObject(sessionStub(session));
    expect((await api("POST", `/v1/sessions/${session}/turns/${first.json.turnId}/client-results`, { callId: d3.callId, value: "yes" })).status).toBe(
      202,
    );
    expect(
      (await api("POST", `/v1/sessions/${session}/turns/${first.json.turnId}/client-results`, { callId: d3.callId, value: "again" })).status,
    ).toBe(409);
    await appendSteps(s.id, [{ text: "Send S-2.", usage: USAGE }]);
    const second = await chat(session, { turnId: first.json.turnId });
    expect(second.json).toMatchObject({
      status: "completed",
      message: { content: "Send S-2." },
      meta: { assistantTurns: 3, toolSummary: { calls: 3, failures: 0 } },
    });
    const all = await requests(s.id);
    for (const r of all) expect(r.problems).toEqual([]);
    const replayed = toolResults(all[2]!);
    expect(replayed.map((r) => r.id)).toEqual(["d1", "d2", "d3"]);
    expect(JSON.parse(replayed[2]!.content)).toEqual({ status: "completed", value: "yes" });
    // Direct exposure sends every tool's schema on every round trip: more prompt bytes than code mode's two tools.
    expect(second.json.meta.promptBytes).toBeGreaterThan(0);
  });
});

describe("/chat: requests refused before the loop starts", () => {
  it("names what is wrong (400), hides other tenants' turns (404), and continues only waiting turns (409)", async () => {
    const session = sessionId();
    expect((await chat(session, { messages: [{ role: "user", content: "hi" }] })).json.error).toMatchObject({
      code: "invalid_request",
      path: "model",
    });
    expect((await chat(session, { model: "fakeoai/gpt-fake", messages: [] })).json.error).toMatchObject({
      code: "invalid_request",
      path: "messages",
    });
    expect((await chat(session, { model: "fakeoai/gpt-fake", messages: [{ role: "tool", content: "x" }] })).json.error.path).toBe("messages[0].role");
    const unknown = await chat(session, { model: "fakeoai/no-such-model", messages: [{ role: "user", content: "hi" }] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain("fakeoai/no-such-model");

    const s = await script([{ text: "Hello." }]);
    const done = await chat(session, { model: "fakeoai/gpt-fake", messages: [{ role: "user", content: `${s.marker} hi` }] });
    expect(done.json).toMatchObject({ status: "completed", message: { content: "Hello." } });
    expect((await chat(session, { turnId: done.json.turnId })).status).toBe(409);
    expect((await chat(session, { turnId: done.json.turnId }, { token: TOKEN_B })).status).toBe(404);
    expect((await api("GET", `/v1/sessions/${session}/turns/${done.json.turnId}/trajectory`, undefined, TOKEN_B)).status).toBe(404);
    expect((await chat(session, { turnId: "00000000-0000-0000-0000-000000000000" })).status).toBe(404);
  });
});
