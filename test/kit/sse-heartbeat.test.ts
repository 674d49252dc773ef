import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { exec, openTurn, sessionId, sleep, TOKEN_A } from "../e2e/helpers";
import { chat, parseSse, script } from "../e2e/chat-helpers";

// The kit gateway (test/kit/entry.ts) sends its SSE heartbeat every 200 ms.
const MODEL = "fakeoai/gpt-fake";

describe("/chat event streams stay alive while quiet", () => {
  it("a quiet stream gets ': keep-alive' comment lines between events; the events are unchanged", async () => {
    const s = await script([
      { toolCalls: [{ id: "q1", name: "exec", input: { code: "return await echo({ value: 5, delayMs: 700 })" } }] },
      { text: "five" },
    ]);
    const res = await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }] }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    const quiet = res.text.slice(res.text.indexOf("event: tool_call_start"), res.text.indexOf("event: tool_call_end"));
    expect(quiet.match(/^: keep-alive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    const events = parseSse(res.text);
    expect(events.at(-1)).toMatchObject({ event: "done", data: { answer: { message: { content: "five" } } } });
    expect(events.some((e) => e.event === "")).toBe(false);
  });

  // In-process the cancel reaches the stream at once; over a real socket it is the heartbeat's
  // failed write that delivers it (at most `sseHeartbeatMs` later).
  it("a client that cancels the stream mid-cell cancels the cell before its later side effect", async () => {
    const session = sessionId();
    const code = "await echo({ value: 1, delayMs: 1500 }); await notes_write({ key: 'after-hangup', text: 'ran' }); return 1";
    const s = await script([{ toolCalls: [{ id: "h1", name: "exec", input: { code } }] }, { text: "never" }]);
    const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN_A}`, accept: "text/event-stream" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: `${s.marker} go` }] }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (!seen.includes("event: tool_call_start")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    await sleep(2500);
    const turnId = await openTurn(session);
    expect((await exec(session, turnId, "return await notes_read({ key: 'after-hangup' })")).value).toEqual([]);
  });
});
