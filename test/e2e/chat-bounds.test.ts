import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, sessionId } from "./helpers";
import { chat, requests, rows, script, trajectory, user } from "./chat-helpers";
import { MAX_ASSISTANT_TURNS, MAX_CHAT_MESSAGE_CHARS, MAX_CHAT_MESSAGES, MAX_TRAJECTORY_EVENTS, MAX_TRANSCRIPT_BYTES } from "../../src/limits";

// Every bound of POST /v1/sessions/:sessionId/chat: the request (messages, their size, the
// number of assistant turns) and what a turn may store (trajectory events, transcript bytes).

const MODEL = "fakeoai/gpt-fake";
const ANT = "fakeant/claude-fake";

describe("/chat: every bound of the route is enforced", () => {
  it("messages: at most MAX_CHAT_MESSAGES, each at most MAX_CHAT_MESSAGE_CHARS; maxAssistantTurns 1..64 integers", async () => {
    const session = sessionId();
    const base = { model: MODEL };
    const many = Array.from({ length: MAX_CHAT_MESSAGES + 1 }, () => ({ role: "user", content: "x" }));
    expect((await chat(session, { ...base, messages: many })).json.error).toMatchObject({ code: "invalid_request", path: "messages" });
    const long = "y".repeat(MAX_CHAT_MESSAGE_CHARS + 1);
    expect((await chat(session, { ...base, messages: [{ role: "user", content: long }] })).json.error.path).toBe("messages[0].content");
    const parts = [
      { type: "text", text: long.slice(1) },
      { type: "text", text: "zz" },
    ];
    expect((await chat(session, { ...base, messages: [{ role: "user", content: parts }] })).json.error.path).toBe("messages[0].content");
    for (const n of [0, MAX_ASSISTANT_TURNS + 1, 1.5, "2"]) {
      expect((await chat(session, { ...base, messages: [{ role: "user", content: "x" }], maxAssistantTurns: n })).json.error.path).toBe(
        "maxAssistantTurns",
      );
    }
    // At the bounds: accepted (the fake provider answers the scripted request).
    const s = await script([{ text: "ok" }]);
    const atBound = Array.from({ length: MAX_CHAT_MESSAGES }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: i === 0 ? s.marker : "x" }));
    expect((await chat(session, { ...base, messages: atBound, maxAssistantTurns: MAX_ASSISTANT_TURNS })).json).toMatchObject({ status: "completed" });
  });

  it("the trajectory keeps at most MAX_TRAJECTORY_EVENTS events per turn and counts the rest", async () => {
    const session = sessionId();
    const turn = await api("POST", `/v1/sessions/${session}/turns`, { agentId: "bigmem" });
    const r = await api("POST", `/v1/sessions/${session}/turns/${turn.json.turnId}/tools/exec`, {
      code: `let n = 0; for (let i = 0; i < ${MAX_TRAJECTORY_EVENTS + 50}; i++) n += await echo({ value: 1 }); return n;`,
    });
    expect(r.json).toMatchObject({ status: "completed", value: MAX_TRAJECTORY_EVENTS + 50 });
    const t = await api("GET", `/v1/sessions/${session}/turns/${turn.json.turnId}/trajectory`);
    // Nested activity stops early so the turn's own lifecycle still fits: the exec's end is kept.
    const nested = t.json.calls[0].nested.length;
    expect(nested).toBeLessThan(MAX_TRAJECTORY_EVENTS - 100);
    expect(nested + t.json.omittedEvents).toBe(MAX_TRAJECTORY_EVENTS + 50);
    expect(t.json.calls[0]).toMatchObject({ status: "completed" });
  });

  it("a turn's transcript is bounded: once over MAX_TRANSCRIPT_BYTES the loop stops after that round", async () => {
    const session = sessionId();
    // Each round stores a small exec call and its ~64 KB result; the messages bring 960 KB.
    const steps = Array.from({ length: 30 }, (_, i) => ({ toolCalls: [{ id: `e${i}`, name: "exec", input: { code: "return 'v'.repeat(64000)" } }] }));
    const s = await script(steps);
    const filler = Array.from({ length: 4 }, (_, i) => ({ role: "user", content: (i === 0 ? s.marker : "") + "u".repeat(240_000) }));
    const r = await chat(session, { model: MODEL, messages: filler, maxAssistantTurns: 30 });
    expect(r.json).toMatchObject({ status: "completed", meta: { stopReason: "transcript_limit" } });
    const rounds = r.json.meta.assistantTurns;
    expect(rounds).toBeLessThan(30);
    const perRound = 64_000 + 1_000; // the result (with its envelope) plus the assistant message, roughly
    expect(960_000 + rounds * perRound).toBeGreaterThan(MAX_TRANSCRIPT_BYTES);
    expect(960_000 + (rounds - 2) * perRound).toBeLessThan(MAX_TRANSCRIPT_BYTES);
  });

  it("a round that crosses the transcript bound stops there: its later calls are answered without running, no further model call", async () => {
    const session = sessionId();
    // One round of 30 cells, each storing a 64 KB result after 960 KB of messages: the bound falls inside the round.
    const calls = Array.from({ length: 30 }, (_, i) => ({
      id: `r${i}`,
      name: "exec",
      input: { code: `await notes_write({ key: 'n${i}', text: 'x' }); return 'v'.repeat(64000)` },
    }));
    const s = await script([{ toolCalls: calls }, { text: "never asked" }]);
    const filler = Array.from({ length: 4 }, (_, i) => ({ role: "user", content: (i === 0 ? s.marker : "") + "u".repeat(240_000) }));
    const r = await chat(session, { model: MODEL, messages: filler, maxAssistantTurns: 5 });
    expect(r.json).toMatchObject({ status: "completed", meta: { stopReason: "transcript_limit", assistantTurns: 1 } });
    expect(await requests(s.id)).toHaveLength(1);
    const turn = await api("POST", `/v1/sessions/${session}/turns`, {});
    const written: string[] = (
      await api("POST", `/v1/sessions/${session}/turns/${turn.json.turnId}/tools/exec`, {
        code: "return (await notes_read({ prefix: 'n' })).map((n) => n.key)",
      })
    ).json.value;
    // The cells that ran are those before the crossing (1 MiB of room / 64 KB ≈ 17), not all 30.
    expect(written.length).toBeGreaterThan(10);
    expect(written.length).toBeLessThan(20);
  });

  it("every bound is a 400 naming its path (or 413 for the body), never a 500", async () => {
    const m = (n: number, c = "x") => Array.from({ length: n }, () => ({ role: "user", content: c }));
    const cases: Array<[unknown, number, string?]> = [
      [{ model: MODEL, messages: m(257) }, 400, "messages"],
      [{ model: MODEL, messages: [{ role: "user", content: "x".repeat(256 * 1024 + 1) }] }, 400, "messages[0].content"],
      [
        {
          model: MODEL,
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "x".repeat(200_000) },
                { type: "text", text: "x".repeat(70_000) },
              ],
            },
          ],
        },
        400,
        "messages[0].content",
      ],
      [
        { model: MODEL, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "http://x" } }] }] },
        400,
        "messages[0].content[0]",
      ],
      [{ model: MODEL, messages: [{ role: "user", content: [{ type: "text", text: "a" }, null] }] }, 400, "messages[0].content[1]"],
      [{ model: MODEL, messages: m(5, "x".repeat(250_000)) }, 413],
      [{ model: MODEL, messages: m(1), maxAssistantTurns: 0 }, 400, "maxAssistantTurns"],
      [{ model: MODEL, messages: m(1), maxAssistantTurns: 65 }, 400, "maxAssistantTurns"],
      [{ model: MODEL, messages: m(1), maxAssistantTurns: 1.5 }, 400, "maxAssistantTurns"],
      [{ model: MODEL, messages: m(1), maxAssistantTurns: "2" }, 400, "maxAssistantTurns"],
      [{ model: MODEL, messages: m(1), maxAssistantTurns: null }, 400, "maxAssistantTurns"],
      [{ model: MODEL, messages: [{ role: "system", content: "x" }] }, 400, "messages"],
      [{ model: MODEL, messages: [{ role: "tool", content: "x" }] }, 400, "messages[0].role"],
      [{ model: MODEL, messages: [{ role: "user", content: "x", name: "bob" }] }, 400, "messages[0].name"],
      [{ model: MODEL, messages: [{ role: "user", content: null }] }, 400, "messages[0].content"],
      [{ model: MODEL, messages: { 0: { role: "user", content: "x" } } }, 400, "messages"],
      [JSON.parse('{"model":"fakeoai/gpt-fake","messages":[{"role":"user","content":"x"}],"__proto__":{"turnId":"x"}}'), 400, "__proto__"],
      [{ turnId: "abc", messages: [{ role: "user", content: "x" }] }, 400, "messages"],
      [{ turnId: "abc", clientTools: [] }, 400, "clientTools"],
      [{ turnId: "../x" }, 400, "turnId"],
      [{ model: MODEL }, 400, "messages"],
      [[1], 400, ""],
    ];
    for (const [body, status, path] of cases) {
      const r = await chat(sessionId(), body);
      expect([JSON.stringify(body).slice(0, 80), r.status]).toEqual([JSON.stringify(body).slice(0, 80), status]);
      if (path !== undefined) expect(r.json.error.path).toBe(path);
    }
    const bad = await SELF.fetch(`http://gateway/v1/sessions/${sessionId()}/chat`, {
      method: "POST",
      headers: { authorization: "Bearer test-token-a", "content-type": "application/json" },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    const noAuth = await chat(sessionId(), { model: MODEL, messages: m(1) }, { token: "not-a-token" });
    expect(noAuth.status).toBe(401);
  });

  it("exactly at the bounds (256 messages, 262 144 characters, maxAssistantTurns 64) is accepted", async () => {
    const s = await script([{ text: "ok" }]);
    const many = [
      { role: "user", content: `${s.marker} first` },
      ...Array.from({ length: 255 }, (_, i) => ({ role: i % 2 ? "user" : "assistant", content: `m${i}` })),
    ];
    const r = await chat(sessionId(), { model: MODEL, messages: many, maxAssistantTurns: 64 });
    expect(r.json).toMatchObject({ status: "completed", message: { content: "ok" } });
    const s2 = await script([{ text: "ok" }]);
    const marker = `${s2.marker} `;
    const r2 = await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: marker + "x".repeat(256 * 1024 - marker.length) }] });
    expect(r2.json).toMatchObject({ status: "completed" });
    expect((await requests(s2.id))[0]!.problems).toEqual([]);
  });

  // Regression: /chat accepted an empty user message (`""`, or `[]` parts that join to ""), which the
  // Messages API refuses ("text content blocks must be non-empty"): the gateway opened a turn, called
  // the provider and answered 502 provider_error for the caller's mistake, the turn left "stopped"
  // and counted against the session's quota.
  it("an empty user message is a 400 (or harmless), never a provider 502", async () => {
    const s = await script([{ text: "ok" }]);
    const r = await chat(sessionId(), { model: ANT, messages: [...user(s.marker), { role: "user", content: "" }] });
    expect(r.status).not.toBe(502);
    expect([200, 400]).toContain(r.status);
  });

  // Regression: past MAX_TRAJECTORY_EVENTS (2000) the first over-bound event INSERTED an `omitted`
  // row, so a turn held 2001 trajectory rows against the store's own bound.
  it("a turn with 2100 nested calls stores at most MAX_TRAJECTORY_EVENTS rows", async () => {
    const session = sessionId();
    const code = "for (let i = 0; i < 2100; i++) await echo({ value: i }); return 1;";
    const s = await script([{ toolCalls: [{ id: "t1", name: "exec", input: { code } }] }, { text: "done" }]);
    const r = await chat(session, { model: MODEL, messages: user(s.marker) });
    expect(r.json).toMatchObject({ status: "completed", meta: { bridgeCalls: { call: 2100 } } });
    const t = await trajectory(session, r.json.turnId);
    expect(t.status).toBe(200);
    expect(t.json.omittedEvents).toBeGreaterThan(0);
    const [count] = await rows<{ n: number }>(session, `SELECT COUNT(*) AS n FROM trajectory WHERE turn_id = '${r.json.turnId}'`);
    expect(count!.n).toBeLessThanOrEqual(2000);
  });
});
