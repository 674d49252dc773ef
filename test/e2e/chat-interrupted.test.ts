import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, cellRunning, expectHealthy, openTurn, sessionId, untilInSession } from "./helpers";
import { chat, expectNoInternals, parseSse, rows, script, sseChat, trajectory, user } from "./chat-helpers";

// A /chat loop cut short while it runs (its turn or session deleted, the session object reset, a
// provider stream that stalls) ends with a clear error, leaves nothing behind and no turn stuck.

const MODEL = "fakeoai/gpt-fake";
const ANT = "fakeant/claude-fake";

describe("/chat: teardown while the loop runs", () => {
  // Regression: after DELETE of the turn while its /chat call was in the model call, the loop's
  // error path wrote the turn's chat state and a trajectory event AGAIN: orphan rows for a turn that
  // no longer existed, never counted in the quota nor expired (more rows, transcript messages, when
  // the delete landed during a tool call).
  it("deleting the turn mid-loop leaves no orphan rows behind", async () => {
    const session = sessionId();
    const s = await script([{ hangMs: 20_000 }]);
    const c = await sseChat(session, { model: MODEL, messages: user(s.marker) });
    const turnId = parseSse(await c.until("event: turn"))[0]!.data.turnId as string;
    await untilInSession(session, cellRunning, "the model call is in flight");
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    const { text } = await c.rest();
    expect(parseSse(text).at(-1)).toMatchObject({ event: "error", data: { error: { code: "aborted" } } });
    expect((await trajectory(session, turnId)).status).toBe(404);
    await expectHealthy(session, await openTurn(session));
    const orphans = await rows(
      session,
      "SELECT 'chat' AS t, turn_id FROM chat_turns WHERE turn_id NOT IN (SELECT turn_id FROM turns) " +
        "UNION ALL SELECT 'trajectory', turn_id FROM trajectory WHERE turn_id NOT IN (SELECT turn_id FROM turns) " +
        "UNION ALL SELECT 'transcript', turn_id FROM transcript WHERE turn_id NOT IN (SELECT turn_id FROM turns)",
    );
    expect(orphans).toEqual([]);
  });

  // Regression: after DELETE of the whole session while /chat was in the model call, the loop's
  // error path wrote to tables the wipe had just dropped and threw ("no such table: chat_turns"),
  // and the call ended with NO terminal event: JSON callers got 500 internal_error "the agent loop
  // ended without an answer", SSE callers a stream that just stopped after `turn`.
  it("deleting the session mid-loop ends /chat with an aborted error, never a 500 or a cut stream", async () => {
    for (const mode of ["json", "sse"] as const) {
      const session = sessionId();
      const s = await script([{ hangMs: 20_000 }]);
      if (mode === "json") {
        const pending = chat(session, { model: MODEL, messages: user(s.marker) });
        await untilInSession(session, cellRunning, "the model call is in flight");
        expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
        const r = await pending;
        expect(r.status).not.toBe(500);
        expect(r.json.error.code).toBe("aborted");
      } else {
        const c = await sseChat(session, { model: MODEL, messages: user(s.marker) });
        await c.until("event: turn");
        await untilInSession(session, cellRunning, "the model call is in flight");
        expect((await api("DELETE", `/v1/sessions/${session}`)).status).toBe(200);
        const { text } = await c.rest();
        expect(parseSse(text).at(-1)).toMatchObject({ event: "error", data: { error: { code: "aborted" } } });
      }
      // The session is gone and stays gone (nothing re-created by the dying loop); a new turn works.
      expect(await rows(session, "SELECT name FROM sqlite_master WHERE name = 'chat_turns'")).toEqual([]);
      await expectHealthy(session, await openTurn(session));
    }
  });

  // Regression: a platform reset of the session object (CPU/memory limit, deploy) while /chat ran
  // answered 500 internal_error (the tools route answers the same event as a failed cell / 503
  // session_reset) and left the turn's stored state "running" FOREVER: every later `/chat {turnId}`
  // was 409 "another /chat call is driving this turn" and the trajectory showed it running.
  it("a reset of the session object mid-loop is not a 500 and does not leave the turn 'running'", async () => {
    const session = sessionId();
    const s = await script([{ hangMs: 20_000 }]);
    const pending = chat(session, { model: MODEL, messages: user(s.marker) });
    await untilInSession(session, cellRunning, "the model call is in flight");
    const turnId = (await rows<{ turn_id: string }>(session, "SELECT turn_id FROM chat_turns"))[0]!.turn_id;
    await abortAllDurableObjects();
    const r = await pending;
    expectNoInternals(r.text);
    expect(r.status).not.toBe(500);
    const t = await trajectory(session, turnId);
    expect(t.status).toBe(200);
    expect(t.json.status).not.toBe("running");
    const again = await chat(session, { turnId });
    expect(again.json?.error?.message ?? "").not.toContain("another /chat call is driving this turn");
    await expectHealthy(session, turnId);
  });

  it("a provider stream that stalls and ends without finishing is a 502, the turn is stopped and the session healthy", async () => {
    const session = sessionId();
    const s = await script([{ hangMs: 300, text: "partial" }]);
    const r = await chat(session, { model: ANT, messages: user(s.marker) }, { accept: "text/event-stream" });
    const events = parseSse(r.text);
    expect(events.map((e) => e.event)).toEqual(["turn", "text", "error"]);
    expect(events.at(-1)!.data.error.code).toBe("provider_unavailable");
    const turnId = events[0]!.data.turnId;
    expect((await trajectory(session, turnId)).json.status).toBe("stopped");
    const json = await chat(session, { model: ANT, messages: user((await script([{ hangMs: 300 }])).marker) });
    expect(json.status).toBe(502);
    expectNoInternals(json.text);
    await expectHealthy(session, turnId);
  });
});
