import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionId, sessionProbe, sleep } from "./helpers";
import { appendSteps, chat, rows, script, user } from "./chat-helpers";

// An open call (open_calls) is one a reset would report lost: none may stay open once the /chat
// call that started or admitted it has returned, however it ended.

const ASK = { name: "ask_user", description: "Ask", parameters: { type: "object", properties: { q: { type: "string" } } } };

const openCalls = (session: string, turnId: string) => rows(session, `SELECT call_id, tool FROM open_calls WHERE turn_id = '${turnId}'`);

describe("no call is left open after a /chat call", () => {
  it("a call whose dispatch throws ends failed with internal_error, and the turn continues", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "e1", name: "echo", input: { value: 1 } }] }, { text: "done" }]);
    // The direct tool's counters are saved after it ran: that write fails.
    await sessionProbe(session).failNextStatement("UPDATE turns SET counters", "SQLITE_IOERR: disk I/O error");
    const r = await chat(session, { model: "fakeoai/gpt-fake", agentId: "off", messages: user(s.marker) });
    expect(r.json.error.code).toBe("internal_error");
    const turnId = r.json.turnId as string;
    expect(await openCalls(session, turnId)).toEqual([]);
    const ends = await rows<{ body: string }>(session, `SELECT body FROM trajectory WHERE turn_id = '${turnId}' AND kind = 'outer_end'`);
    expect(ends.map((e) => JSON.parse(e.body))).toEqual([expect.objectContaining({ callId: "e1", status: "failed", code: "internal_error" })]);
    const again = await chat(session, { turnId });
    expect(again.json.status).toBe("completed");
    expect(await openCalls(session, turnId)).toEqual([]);
  });

  it("a call opened at the round's start whose open fails is ended, and a continuation completes the turn", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "w1", name: "wait", input: { runId: "cm_x" } }] }]);
    await sessionProbe(session).failNextStatement("SELECT 1 AS x FROM untrusted_runs", "SQLITE_IOERR: disk I/O error");
    const r = await chat(session, { model: "fakeoai/gpt-fake", messages: user(s.marker) });
    expect(r.json.error.code).toBe("internal_error");
    const turnId = r.json.turnId as string;
    await appendSteps(s.id, [{ text: "done" }]);
    expect((await chat(session, { turnId })).json.status).toBe("completed");
    expect(await openCalls(session, turnId)).toEqual([]);
  });

  it("client calls admitted in a round whose /chat call is cancelled are not left open", async () => {
    const session = sessionId();
    const s = await script([
      {
        toolCalls: [
          { id: "a1", name: "ask_user", input: { q: "?" } },
          { id: "slow", name: "echo", input: { value: 1, delayMs: 3000 } },
        ],
      },
      { text: "done" },
    ]);
    const res = await SELF.fetch(`http://gateway/v1/sessions/${session}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer test-token-a", accept: "text/event-stream" },
      body: JSON.stringify({ model: "fakeoai/gpt-fake", agentId: "off", clientTools: [ASK], messages: user(s.marker) }),
    });
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes('"callId":"slow"')) seen += new TextDecoder().decode((await reader.read()).value);
    const turnId = /"turnId":"([^"]+)"/.exec(seen)![1]!;
    // The client call is admitted (open until handed to the caller) while the slow call runs.
    expect((await openCalls(session, turnId)).map((c: any) => c.tool)).toEqual(expect.arrayContaining(["ask_user"]));
    await reader.cancel();
    for (let i = 0; i < 100; i++) {
      const [st] = await rows<{ s: string }>(session, `SELECT json_extract(state, '$.status') AS s FROM chat_turns WHERE turn_id = '${turnId}'`);
      if (st?.s !== "running") break;
      await sleep(50);
    }
    expect(await openCalls(session, turnId)).toEqual([]);
    expect((await chat(session, { turnId })).json.status).toBe("completed");
    expect(await openCalls(session, turnId)).toEqual([]);
  });
});
