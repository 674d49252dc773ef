import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CodemodeClient, createClient, type ChatEvent, type CodeModeResult, type Result } from "../../src/client";
import { sessionId, TOKEN_A, TOKEN_B } from "./helpers";
import { script } from "./chat-helpers";

// codemode-edge/client against the gateway in workerd: its fetch is routed through SELF.fetch, so
// every call crosses the real edge (auth, validation, session object, VM).

const viaGateway = (input: string, init: RequestInit) => SELF.fetch(input, init);
const client = (token = TOKEN_A) => createClient({ baseUrl: "http://gateway/", token, fetch: viaGateway });
const MODEL = "fakeoai/gpt-fake";

function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected success, got ${r.error.code} (${r.error.status}): ${r.error.message}`);
  return r.value;
}

describe("the typed client's turn routes", () => {
  it("health answers the runtime and version", async () => {
    expect(value(await client().health())).toMatchObject({ ok: true, runtime: "quickjs-wasi", version: expect.any(String) });
  });

  it("opens a turn with the model-visible exec/wait, runs a demo tool in a cell, reads the trajectory and deletes the turn", async () => {
    const c = client();
    const session = sessionId();
    const turn = value(await c.openTurn(session));
    expect(turn.codeModeEngaged).toBe(true);
    expect(turn.tools.map((t) => t.name)).toEqual(["exec", "wait"]);
    expect(turn.tools[0]!.parameters).toMatchObject({ type: "object" });
    const r = value(await c.exec(session, turn.turnId, { code: "const s = await shipping_list({}); return s.length > 0" }));
    expect(r).toMatchObject({ status: "completed", value: true });
    const trajectory = value(await c.trajectory(session, turn.turnId));
    expect(trajectory.calls.map((call) => call.tool)).toEqual(["exec"]);
    expect(trajectory.calls[0]!.nested.map((n) => n.tool)).toEqual(["shipping_list"]);
    const deleted = value(await c.deleteTurn(session, turn.turnId));
    expect(deleted.telemetry.counters.call).toBe(1);
    const gone = await c.exec(session, turn.turnId, { code: "return 1" });
    expect(gone).toMatchObject({ ok: false, error: { code: "not_found", status: 404 } });
  });

  it("describeTurn reads back an open turn's tools as it opened; another tenant's, a deleted or an unknown turn is not_found", async () => {
    const c = client();
    const session = sessionId();
    const clientTools = [{ name: "ask_user", description: "asks", parameters: { type: "object", properties: { q: { type: "string" } } } }];
    const opened = value(await c.openTurn(session, { clientTools }));
    const described = value(await c.describeTurn(session, opened.turnId));
    expect(described).toEqual({ turnId: opened.turnId, codeModeEngaged: true, tools: opened.tools });
    // Reading it records nothing: the trajectory stays empty.
    expect(value(await c.trajectory(session, opened.turnId)).calls).toEqual([]);
    expect(await client(TOKEN_B).describeTurn(session, opened.turnId)).toMatchObject({ ok: false, error: { code: "not_found", status: 404 } });
    expect(await c.describeTurn(session, crypto.randomUUID())).toMatchObject({ ok: false, error: { code: "not_found", status: 404 } });
    value(await c.deleteTurn(session, opened.turnId));
    expect(await c.describeTurn(session, opened.turnId)).toMatchObject({ ok: false, error: { code: "not_found", status: 404 } });
  });

  it("runToCompletion runs the cell's client tool calls through the app's handler, delivers them and waits to the end", async () => {
    const c = client();
    const session = sessionId();
    const clientTools = [{ name: "ask_user", parameters: { type: "object", properties: { q: { type: "string" } } } }];
    const { turnId } = value(await c.openTurn(session, { clientTools }));
    const seen: unknown[] = [];
    const r = await c.runToCompletion(
      session,
      turnId,
      { code: "const a = await ask_user({ q: 'name?' }); let b; try { await ask_user({ q: 'fail' }) } catch (e) { b = e.message } return [a, b]" },
      {
        onClientCall: (call) => {
          seen.push(call.input);
          if ((call.input as { q: string }).q === "fail") throw new Error("the user left");
          return { value: "Ada" };
        },
      },
    );
    expect(value(r)).toMatchObject({ status: "completed", value: ["Ada", expect.stringContaining("the user left")] });
    expect(seen).toEqual([{ q: "name?" }, { q: "fail" }]);
  });

  it("exec, deliver and wait step by step: a waiting result, the delivery's answer, the resumed cell", async () => {
    const c = client();
    const session = sessionId();
    const { turnId } = value(await c.openTurn(session, { clientTools: [{ name: "pick" }] }));
    const waiting = value(await c.exec(session, turnId, { code: "return (await pick({})) * 2" }));
    if (waiting.status !== "waiting") throw new Error(`expected waiting, got ${waiting.status}`);
    const [call] = waiting.pendingToolCalls ?? [];
    expect(call).toMatchObject({ tool: "pick", input: {} });
    expect(value(await c.deliver(session, turnId, { callId: call!.callId, value: 21 }))).toMatchObject({ accepted: true });
    const done: CodeModeResult = value(await c.wait(session, turnId, waiting.runId));
    expect(done).toMatchObject({ status: "completed", value: 42 });
  });

  it("a direct tool of a turn without code mode is called by name and answers its result", async () => {
    const c = client();
    const session = sessionId();
    const turn = value(await c.openTurn(session, { agentId: "off" }));
    expect(turn.codeModeEngaged).toBe(false);
    expect(turn.tools.map((t) => t.name)).toContain("echo");
    expect(value(await c.callTool(session, turn.turnId, "echo", { value: { n: 1 } }))).toEqual({ status: "completed", value: { n: 1 } });
  });

  it("approvals: the pending one is listed, decided once, and a second decision is a typed conflict", async () => {
    const c = client();
    const session = sessionId();
    const { turnId } = value(await c.openTurn(session, { agentId: "approve" }));
    const running = c.exec(session, turnId, { code: "await notes_write({ key: 'k', text: 'hi' }); return (await notes_read({ key: 'k' }))[0].text" });
    let pending = value(await c.approvals(session));
    for (let i = 0; pending.length === 0 && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      pending = value(await c.approvals(session));
    }
    expect(pending).toMatchObject([{ turnId, tool: "notes_write", approvalId: expect.stringMatching(/^appr_/) }]);
    const id = pending[0]!.approvalId;
    expect(value(await c.decide(session, id, { decision: "allow" }))).toEqual({ approvalId: id, decision: "allow" });
    expect(value(await running)).toMatchObject({ status: "completed", value: "hi" });
    expect(await c.decide(session, id, { decision: "deny" })).toMatchObject({ ok: false, error: { code: "conflict", status: 409 } });
  });

  it("deleting the session removes what it stored: its turns are then unknown", async () => {
    const c = client();
    const session = sessionId();
    const { turnId } = value(await c.openTurn(session));
    expect(value(await c.deleteSession(session))).toEqual({ deleted: true });
    expect(await c.trajectory(session, turnId)).toMatchObject({ ok: false, error: { code: "not_found", status: 404 } });
  });
});

describe("the typed client's errors are values", () => {
  it("a wrong token is unauthorized (401)", async () => {
    const r = await client("not-a-token").openTurn(sessionId());
    expect(r).toMatchObject({ ok: false, error: { code: "unauthorized", status: 401, message: expect.any(String) } });
  });

  it("a refused body is invalid_request (400) naming the field", async () => {
    const r = await client().openTurn(sessionId(), { agentId: "bad agent id!" });
    expect(r).toMatchObject({ ok: false, error: { code: "invalid_request", status: 400, path: "agentId" } });
  });

  it("a client result for a call nobody waits on is refused with its code and status", async () => {
    const c = client();
    const session = sessionId();
    const { turnId } = value(await c.openTurn(session));
    const r = await c.deliver(session, turnId, { callId: "call_unknown", value: 1 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.status).toBeGreaterThanOrEqual(400);
    expect(r.error.status).toBe({ not_found: 404, conflict: 409, invalid_request: 400 }[r.error.code as string]);
  });

  it("a fetch that rejects is a network_error with status 0, never a throw", async () => {
    const c = new CodemodeClient({
      baseUrl: "http://gateway",
      token: TOKEN_A,
      fetch: () => Promise.reject(new TypeError("connection refused")),
    });
    expect(await c.health()).toEqual({ ok: false, error: { code: "network_error", status: 0, message: "connection refused" } });
  });

  it("an answer that is not the gateway's JSON is invalid_response with its status", async () => {
    const c = new CodemodeClient({
      baseUrl: "http://gateway",
      token: TOKEN_A,
      fetch: async () => new Response("<html>bad gateway</html>", { status: 502 }),
    });
    expect(await c.health()).toMatchObject({ ok: false, error: { code: "invalid_response", status: 502 } });
  });
});

describe("the typed client's /chat", () => {
  it("JSON: the final answer of a turn whose model ran a cell", async () => {
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: "return 6 * 7" } }] }, { text: "42" }]);
    const r = value(await client().chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} compute` }] }));
    expect(r).toMatchObject({ status: "completed", message: { role: "assistant", content: "42" }, meta: { codeModeEngaged: true } });
  });

  it("SSE: the async iterator yields the turn's typed events in order, ending with done", async () => {
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: "return 'x'" } }] }, { text: ["do", "ne"] }]);
    const r = await client().chatEvents(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }] });
    const events: ChatEvent[] = [];
    for await (const event of value(r)) events.push(event);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("turn");
    expect(types).toContain("tool_call_start");
    expect(types.indexOf("tool_call_end")).toBeGreaterThan(types.indexOf("tool_call_start"));
    expect(types.at(-1)).toBe("done");
    const text = events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");
    expect(text).toBe("done");
    const done = events.at(-1);
    if (done?.type !== "done") throw new Error("no done event");
    expect(done.answer).toMatchObject({ status: "completed", message: { content: "done" } });
  });

  it("SSE: a request refused before the turn runs is an error result, not an event", async () => {
    const r = await client().chatEvents(sessionId(), { messages: [{ role: "user", content: "hi" }] });
    expect(r).toMatchObject({ ok: false, error: { code: "invalid_request", status: 400, path: "model" } });
  });

  it("a provider 429 is provider_rate_limited with retryAfter, providerStatus and the turn to continue", async () => {
    const s = await script([{ error: { status: 429, message: "Rate limit reached", headers: { "retry-after": "7" } } }]);
    const r = await client().chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} hi` }] });
    expect(r).toMatchObject({
      ok: false,
      error: { code: "provider_rate_limited", status: 429, retryAfter: 7, providerStatus: 429, turnId: expect.any(String) },
    });
  });
});
