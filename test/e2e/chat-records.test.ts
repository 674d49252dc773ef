import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, cellRunning, sessionId, sessionProbe, untilInSession } from "./helpers";
import { recordsSince, mark } from "../support/log-capture";
import { appendSteps, chat, script } from "./chat-helpers";
import { decide, pendingApprovals } from "./approval-helpers";

// What a /chat turn leaves on record (trajectory, telemetry, the log) through HTTP → session
// object, for cases an audit found unrecorded. Each test names the defect it pins.

const MODEL = "fakeoai/gpt-fake";
const user = (marker: string, text = "go") => [{ role: "user", content: `${marker} ${text}` }];
const trajectory = (session: string, turnId: string) => api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);

describe("client tools the model calls directly (code mode off) are outer calls on record", () => {
  // Was: a direct client call left no outer call in the trajectory (`calls: []`), nothing in
  // `telemetry.calledTools` and no `tool_call` log record, whatever the operator decided.
  it("each call shows with its gateway id, status and approval decision; telemetry counts both; the log has one record per call", async () => {
    const m = mark();
    const session = sessionId();
    // `approvedirect` needs an approval for notes_write; this client tool takes that name (a client tool shadows).
    const clientTools = [{ name: "notes_write", description: "Write a note on the user's device" }];
    const s = await script([
      {
        toolCalls: [
          { id: "p1", name: "notes_write", input: { key: "a" } },
          { id: "p2", name: "notes_write", input: { key: "b" } },
        ],
      },
    ]);
    const running = chat(session, { model: MODEL, agentId: "approvedirect", clientTools, messages: user(s.marker) });
    const [first] = await pendingApprovals(session);
    expect(first!.inputPreview).toContain('"a"');
    await decide(session, first!.approvalId, "allow");
    let second = (await pendingApprovals(session)).find((p) => p.approvalId !== first!.approvalId);
    for (let i = 0; !second && i < 200; i++) second = (await pendingApprovals(session)).find((p) => p.approvalId !== first!.approvalId);
    expect(second!.inputPreview).toContain('"b"');
    await decide(session, second!.approvalId, "deny", "not that one");
    const r = await running;
    expect(r.json).toMatchObject({ status: "waiting", pendingToolCalls: [{ tool: "notes_write", input: { key: "a" } }] });
    const handed = r.json.pendingToolCalls[0].callId as string;
    const turnId = r.json.turnId as string;

    const t = (await trajectory(session, turnId)).json;
    expect(t.calls.map((c: any) => [c.tool, c.via, c.status, c.decision])).toEqual([
      ["notes_write", "chat", "pending", "approved"],
      ["notes_write", "chat", "failed", "denied"],
    ]);
    expect(t.calls[0].callId).toBe(handed);
    expect(t.calls[1].callId).toMatch(/^ccall_/);
    expect(t.calls[1].callId).not.toBe(handed);
    expect(t.calls[0].input).toContain('"a"');
    expect(t.telemetry.calledTools).toEqual([{ tool: "notes_write", id: "client:notes_write", source: "client", calls: 2 }]);

    // The refused call is logged when refused; the handed-out one once its result arrives.
    const denied = recordsSince(m).filter((x) => x.kind === "tool_call" && x.turnId === turnId);
    expect(denied).toEqual([
      expect.objectContaining({
        parentCallId: t.calls[1].callId,
        callId: t.calls[1].callId,
        tool: "notes_write",
        outcome: "error",
        decision: "denied",
      }),
    ]);
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: handed, value: { ok: true } })).status).toBe(202);
    const after = (await trajectory(session, turnId)).json;
    expect(after.calls[0]).toMatchObject({ callId: handed, status: "completed", decision: "approved" });
    expect(typeof after.calls[0].durationMs).toBe("number");
    const logged = recordsSince(m).filter((x) => x.kind === "tool_call" && x.turnId === turnId);
    expect(logged.map((x) => [x.callId, x.outcome, x.decision])).toEqual([
      [t.calls[1].callId, "error", "denied"],
      [handed, "ok", "approved"],
    ]);
    expect(JSON.stringify(logged)).not.toContain('"key"');

    await appendSteps(s.id, [{ text: "Noted." }]);
    const done = await chat(session, { turnId });
    expect(done.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 2, tools: ["notes_write"], failures: 1 } } });
    // The continuation adds no second record of either call.
    expect((await trajectory(session, turnId)).json.calls).toHaveLength(2);
  });

  it("a client tool that fails its result is recorded failed", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "p1", name: "ask_user", input: {} }] }]);
    const r = await chat(session, { model: MODEL, agentId: "off", clientTools: [{ name: "ask_user" }], messages: user(s.marker) });
    const callId = r.json.pendingToolCalls[0].callId;
    await api("POST", `/v1/sessions/${session}/turns/${r.json.turnId}/client-results`, { callId, error: { message: "the user closed the app" } });
    const t = (await trajectory(session, r.json.turnId)).json;
    expect(t.calls).toEqual([expect.objectContaining({ callId, tool: "ask_user", status: "failed" })]);
    expect(t.calls[0].decision).toBeUndefined();
  });
});

describe("meta.stopReason says why the turn ended", () => {
  // Was: every error body's meta, and the trajectory of a stopped turn, said `stopReason: "final"`.
  it.each([
    [{ error: { status: 429, message: "Rate limit reached", headers: { "retry-after": "3" } } }, 429, "provider_rate_limited"],
    [{ error: { status: 500, message: "overloaded" } }, 502, "provider_unavailable"],
    [{ error: { status: 401, message: "Incorrect API key provided" } }, 502, "provider_error"],
  ])("a provider failure (%#) stops the turn with its error code, in the error body and the trajectory", async (step, status, code) => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: "return 1" } }] }, step]);
    const r = await chat(session, { model: MODEL, messages: user(s.marker) });
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(r.json.meta).toMatchObject({ stopReason: code, assistantTurns: 1, toolSummary: { calls: 1 } });
    const t = (await trajectory(session, r.json.turnId)).json;
    expect(t).toMatchObject({ status: "stopped", meta: { stopReason: code } });
  });

  it("a turn the session object's reset cut off reads stopped by session_reset; a continuation that answers ends final", async () => {
    const session = sessionId();
    const s = await script([{ hangMs: 20_000 }]);
    const running = chat(session, { model: MODEL, messages: user(s.marker) });
    await untilInSession(session, cellRunning, "the model call is in flight");
    const turnId = (await sessionProbe(session).storageRows("SELECT turn_id FROM chat_turns"))[0]!.turn_id as string;
    await abortAllDurableObjects();
    expect((await running).json.error.code).toBe("session_reset");
    const stopped = (await trajectory(session, turnId)).json;
    expect(stopped).toMatchObject({ status: "stopped", meta: { stopReason: "session_reset" } });
    expect(stopped.limitsHit.map((l: any) => l.limit)).toEqual(["session_reset"]);
    await appendSteps(s.id, [{ text: "Back." }]);
    const again = await chat(session, { turnId });
    expect(again.json).toMatchObject({ status: "completed", meta: { stopReason: "final" } });
    expect((await trajectory(session, turnId)).json.meta.stopReason).toBe("final");
  });
});

describe("a reset of the session object under a /chat tool call is on record once the object is back", () => {
  // Was: the outer exec kept no status or end even after a successful continuation, toolSummary
  // counted 0 calls, no reset was recorded, and the nested call whose approval the reset lost had
  // no entry and no `lost` decision.
  it("the outer exec ends lost with a session_reset limit, its gated nested call shows the lost decision, and the continuation counts the call", async () => {
    const m = mark();
    const session = sessionId();
    const s = await script([
      { toolCalls: [{ id: "x1", name: "exec", input: { code: "await notes_write({ key: 'r', text: 'x' }); return 'ran';" } }] },
    ]);
    const running = chat(session, { model: MODEL, agentId: "approve", messages: user(s.marker) });
    const [p] = await pendingApprovals(session);
    await abortAllDurableObjects();
    const cut = await running;
    expect(cut.json.error.code).toBe("session_reset");
    const turnId = p!.turnId;

    const t = (await trajectory(session, turnId)).json;
    expect(t.status).toBe("stopped");
    expect(t.calls).toHaveLength(1);
    expect(t.calls[0]).toMatchObject({ callId: "x1", tool: "exec", via: "chat", status: "lost", code: "session_reset" });
    expect(t.calls[0].nested).toEqual([
      expect.objectContaining({ tool: "notes_write", source: "openclaw", status: "error", decision: "lost", input: expect.stringContaining('"r"') }),
    ]);
    expect(t.limitsHit).toEqual([expect.objectContaining({ limit: "session_reset", callId: "x1" })]);
    const lost = recordsSince(m).filter((x) => x.kind === "tool_call" && x.turnId === turnId);
    expect(lost).toEqual([expect.objectContaining({ parentCallId: "x1", tool: "notes_write", outcome: "error", decision: "lost" })]);
    // The decision can never allow it now.
    expect((await decide(session, p!.approvalId, "allow")).status).toBe(409);

    await appendSteps(s.id, [{ text: "It did not run; I will ask again later." }]);
    const again = await chat(session, { turnId });
    expect(again.json).toMatchObject({ status: "completed", meta: { stopReason: "final", toolSummary: { calls: 1, tools: ["exec"], failures: 1 } } });
    const after = (await trajectory(session, turnId)).json;
    expect(after.calls.map((c: any) => [c.callId, c.status])).toEqual([["x1", "lost"]]);
    expect(after.limitsHit.map((l: any) => l.limit)).toEqual(["session_reset"]);
  });

  it("code mode off: a direct host tool cut off ends lost, and so does a client call admitted in that round (never handed out)", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: "a1", name: "ask_user", input: {} },
          { id: "e1", name: "echo", input: { value: 1, delayMs: 20_000 } },
        ],
      },
    ]);
    const running = chat(session, { model: MODEL, agentId: "off", clientTools: [{ name: "ask_user" }], messages: user(s.marker) });
    // Two tracked controllers of the turn: the /chat loop's own and the running echo's.
    const echoRunning = (running: Record<string, number>): boolean => Object.values(running).some((n) => n >= 2);
    await untilInSession(session, echoRunning, "echo is running");
    const turnId = (await sessionProbe(session).storageRows("SELECT turn_id FROM chat_turns"))[0]!.turn_id as string;
    await abortAllDurableObjects();
    expect((await running).json.error.code).toBe("session_reset");
    const t = (await trajectory(session, turnId)).json;
    expect(t.calls.map((c: any) => [c.tool, c.status])).toEqual([
      ["ask_user", "lost"],
      ["echo", "lost"],
    ]);
    expect(t.calls[0].callId).toMatch(/^ccall_/);
    expect(t.limitsHit.map((l: any) => [l.limit, l.callId])).toEqual([
      ["session_reset", t.calls[0].callId],
      ["session_reset", "e1"],
    ]);
    await appendSteps(s.id, [{ text: "Both were cut off." }]);
    const again = await chat(session, { turnId });
    expect(again.json).toMatchObject({ status: "completed", meta: { toolSummary: { calls: 2, tools: ["ask_user", "echo"], failures: 2 } } });
  });

  it("a client call handed out before a reset stays pending: the turn waits for its result as before", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "a1", name: "ask_user", input: {} }] }]);
    const r = await chat(session, { model: MODEL, agentId: "off", clientTools: [{ name: "ask_user" }], messages: user(s.marker) });
    const callId = r.json.pendingToolCalls[0].callId;
    await abortAllDurableObjects();
    const t = (await trajectory(session, r.json.turnId)).json;
    expect(t).toMatchObject({ status: "waiting", limitsHit: [] });
    expect(t.calls).toEqual([expect.objectContaining({ callId, status: "pending" })]);
    expect((await api("POST", `/v1/sessions/${session}/turns/${r.json.turnId}/client-results`, { callId, value: "yes" })).status).toBe(202);
    expect((await trajectory(session, r.json.turnId)).json.calls[0].status).toBe("completed");
  });
});
