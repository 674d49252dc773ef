import { SELF } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { chatResponse } from "../../src/http/chat-response";
import { api, exec, openTurn, sessionId, sleep, TOKEN_A } from "../e2e/helpers";
import { requests, script } from "../e2e/chat-helpers";
import { decide, listApprovals, pendingApprovals } from "../e2e/approval-helpers";

// The kit gateway (test/kit/entry.ts) sends its SSE heartbeat every 200 ms. A client that goes
// away is noticed at the next write (an event or a heartbeat): the turn's model call and cell are
// cancelled, and the turn is on record as stopped by `aborted`.
const MODEL = "fakeoai/gpt-fake";

/** Opens /chat as SSE and reads until `until` has been seen; returns the reader and what it read. */
async function openSse(session: string, marker: string, until: (seen: string) => boolean) {
  const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN_A}`, accept: "text/event-stream" },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: `${marker} go` }] }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  while (!until(seen)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  const turnId = /"turnId":"([^"]+)"/.exec(seen)?.[1];
  expect(turnId).toBeDefined();
  return { reader, seen, turnId: turnId! };
}

/** The turn's trajectory once its /chat call is no longer running (bounded polling), or a clear failure. */
async function settledTrajectory(session: string, turnId: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    if (t.status === 200 && t.json.status !== "running") return t.json;
    await sleep(50);
  }
  throw new Error(`turn ${turnId} is still running`);
}

describe("/chat notices an SSE client that went away", () => {
  it("a client gone during a quiet cell (heartbeats only): the cell stops before its later side effect, the turn stops as aborted, the model is not called again", async () => {
    const session = sessionId();
    const code = "await echo({ value: 1, delayMs: 1500 }); await notes_write({ key: 'after-departure', text: 'ran' }); return 1";
    const s = await script([{ toolCalls: [{ id: "d1", name: "exec", input: { code } }] }, { text: "never" }]);
    // Quiet: the cell is running and the only writes are heartbeats.
    const { reader, turnId } = await openSse(session, s.marker, (seen) => /event: tool_call_start[\s\S]*: keep-alive/.test(seen));
    await reader.cancel();

    const t = await settledTrajectory(session, turnId);
    expect(t.status).toBe("stopped");
    expect(t.meta.stopReason).toBe("aborted");
    // The cell was stopped as aborted, on record with the turn's own stop.
    expect(t.calls).toEqual([expect.objectContaining({ callId: "d1", tool: "exec", status: "failed", code: "aborted" })]);
    expect(t.limitsHit).toContainEqual(expect.objectContaining({ limit: "aborted", callId: "d1" }));
    // The cell stopped: once its echo would have answered, its notes_write still never ran.
    await sleep(2000);
    const check = await openTurn(session);
    expect((await exec(session, check, "return await notes_read({ key: 'after-departure' })")).value).toEqual([]);
    // One model call: the loop did not go on to ask the model about the aborted cell.
    expect(await requests(s.id)).toHaveLength(1);
  });

  it("a client gone while a cell waits for an operator: the approval is cancelled (a late decision is a 409), nothing gated ran, the turn stops as aborted", async () => {
    const session = sessionId();
    const code = "await notes_write({ key: 'gated', text: 'ran' }); return 1";
    const s = await script([{ toolCalls: [{ id: "g1", name: "exec", input: { code } }] }, { text: "never" }]);
    const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN_A}`, accept: "text/event-stream" },
      body: JSON.stringify({ model: MODEL, agentId: "approve", messages: [{ role: "user", content: `${s.marker} go` }] }),
    });
    const reader = res.body!.getReader();
    const [pending] = await pendingApprovals(session);
    const turnId = pending!.turnId;
    await reader.cancel();
    const t = await settledTrajectory(session, turnId);
    expect(t.status).toBe("stopped");
    expect(t.meta.stopReason).toBe("aborted");
    expect(t.calls).toEqual([expect.objectContaining({ callId: "g1", status: "failed", code: "aborted" })]);
    expect(await listApprovals(session)).toEqual([]);
    expect((await decide(session, pending!.approvalId, "allow")).status).toBe(409);
    const check = await openTurn(session);
    expect((await exec(session, check, "return await notes_read({ key: 'gated' })")).value).toEqual([]);
    expect(await requests(s.id)).toHaveLength(1);
  });

  it("a client gone while the model is still answering: the model call is cancelled and the turn stops as aborted", async () => {
    const session = sessionId();
    const s = await script([{ hangMs: 20_000, text: "partial" }]);
    const { reader, turnId } = await openSse(session, s.marker, (seen) => /event: turn[\s\S]*: keep-alive/.test(seen));
    await reader.cancel();
    const t = await settledTrajectory(session, turnId);
    expect(t.status).toBe("stopped");
    expect(t.meta.stopReason).toBe("aborted");
    const [req] = await requests(s.id);
    expect(req!.aborted).toBe(true);
    expect(t.calls).toEqual([]);
    expect(t.limitsHit).toContainEqual(expect.objectContaining({ limit: "aborted" }));
  });
});

describe("chatResponse: the SSE face of a /chat call", () => {
  it("a client gone while the turn is quiet stops reading the session object's stream at once (not at its next event) and cancels the call", async () => {
    let upstreamCancelled = false;
    const upstream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ type: "turn", turnId: "t1", codeModeEngaged: true, continued: false }) + "\n"));
        // Then nothing: a cell waiting on a slow tool or an operator.
      },
      cancel() {
        upstreamCancelled = true;
      },
    });
    let cancels = 0;
    const app = new Hono();
    app.post("/chat", (c) => chatResponse(c, upstream, { onError: () => undefined, onCancel: () => void cancels++, heartbeatMs: 100 }));
    const res = await app.request("/chat", { method: "POST", headers: { accept: "text/event-stream" } });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (!seen.includes(": keep-alive")) seen += decoder.decode((await reader.read()).value, { stream: true });
    expect(seen).toContain("event: turn");
    await reader.cancel();
    for (let i = 0; i < 100 && !upstreamCancelled; i++) await sleep(20);
    expect(upstreamCancelled).toBe(true);
    expect(cancels).toBe(1);
  });
});
