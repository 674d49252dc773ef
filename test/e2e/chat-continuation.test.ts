import { describe, expect, it } from "vitest";
import { api, footprint, sessionId } from "./helpers";
import { appendSteps, chat, requests, script, toolResults, user } from "./chat-helpers";

// Continuing a waiting /chat turn (`/chat {turnId}`): the caller answers only its own client
// calls, a retryable failure can be retried, and one continuation drives the turn at a time.

const MODEL = "fakeoai/gpt-fake";
const ASK = [{ name: "ask_user", description: "Ask the user" }];

const post = (session: string, turnId: string, body: unknown, token?: string) =>
  api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, body, token);

describe("/chat: parked and pending work is never lost", () => {
  // Regression (was severe): when a cell parked because a HOST tool was still running at its
  // deadline, /chat stopped "waiting" and handed that host call (`echo`) to the CLIENT, which could
  // not answer it (client-results: 404 unknown callId) while the continuation was refused forever
  // (409 "client results are still pending"): the turn and its parked run were stuck until expiry.
  // Only the turn's client tools are the caller's; the model reads the waiting result and calls `wait`.
  it("a cell parked on a slow host tool goes back to the model, not to the client", async () => {
    const session = sessionId();
    const s = await script([
      { toolCalls: [{ id: "p1", name: "exec", input: { code: "return await echo({ value: 'slow', delayMs: 1500 })" } }] },
      { text: "done" },
    ]);
    const r = await chat(session, { model: MODEL, agentId: "park", clientTools: ASK, messages: user(s.marker) });
    expect(r.status).toBe(200);
    for (const p of r.json.pendingToolCalls ?? []) expect(p.tool).toBe("ask_user");
    expect(r.json).toMatchObject({ status: "completed", message: { content: "done" } });
  });

  // Regression: any error after the loop started (a provider 429 that even says Retry-After, a 5xx,
  // a timeout, a client disconnect) marked the turn "stopped" for good: the retry the answer invites
  // was refused (409 "this turn is stopped"), and a parked run whose client result was already
  // delivered could no longer be resumed through /chat. A retryable failure leaves the turn continuable.
  it("after a provider 429 on a continuation, retrying the continuation resumes the parked run", async () => {
    const session = sessionId();
    const s = await script([
      { toolCalls: [{ id: "e1", name: "exec", input: { code: "const a = await ask_user({ q: 1 }); return 'got ' + a;" } }] },
      { error: { status: 429, message: "slow down", headers: { "retry-after": "1" } } },
    ]);
    const r = await chat(session, { model: MODEL, clientTools: ASK, messages: user(s.marker) });
    const p = r.json.pendingToolCalls[0];
    expect((await post(session, r.json.turnId, { callId: p.callId, value: "yes" })).status).toBe(202);
    const limited = await chat(session, { turnId: r.json.turnId });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await footprint(session)).runs).toBe(1);

    await appendSteps(s.id, [{ toolCalls: [{ id: "w1", name: "wait", input: { runId: p.runId } }] }, { text: "done" }]);
    const retry = await chat(session, { turnId: r.json.turnId });
    expect(retry.status).toBe(200);
    expect(retry.json).toMatchObject({ status: "completed", message: { content: "done" } });
    const waited = toolResults((await requests(s.id)).at(-1)!).find((t) => t.id === "w1")!;
    expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: "got yes" });
  });
});

describe("/chat: concurrency on one turn", () => {
  it("of three concurrent continuations exactly one runs; the others are 409", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "c1", name: "ask_user", input: { q: 1 } }] }, { text: "done" }, { text: "again" }]);
    const first = await chat(session, { model: MODEL, agentId: "off", clientTools: ASK, messages: user(s.marker) });
    expect((await post(session, first.json.turnId, { callId: first.json.pendingToolCalls[0].callId, value: 1 })).status).toBe(202);
    const all = await Promise.all([1, 2, 3].map(() => chat(session, { turnId: first.json.turnId })));
    expect(all.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect(all.find((r) => r.status === 200)!.json).toMatchObject({ status: "completed", message: { content: "done" } });
    expect(await requests(s.id)).toHaveLength(2);
  });

  it("a continuation racing the client result either waits for it (409) or sees it exactly once", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "c1", name: "ask_user", input: { q: 1 } }] }, { text: "done" }]);
    const first = await chat(session, { model: MODEL, agentId: "off", clientTools: ASK, messages: user(s.marker) });
    const [posted, raced] = await Promise.all([
      post(session, first.json.turnId, { callId: first.json.pendingToolCalls[0].callId, value: "racy" }),
      chat(session, { turnId: first.json.turnId }),
    ]);
    expect(posted.status).toBe(202);
    expect([200, 409]).toContain(raced.status);
    const done = raced.status === 200 ? raced : await chat(session, { turnId: first.json.turnId });
    expect(done.json).toMatchObject({ status: "completed", message: { content: "done" } });
    const replay = (await requests(s.id)).at(-1)!;
    expect(replay.problems).toEqual([]);
    expect(toolResults(replay)).toEqual([{ id: "c1", content: JSON.stringify({ status: "completed", value: "racy" }), isError: false }]);
  });
});
