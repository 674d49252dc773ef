import { describe, expect, it } from "vitest";
import { api, sessionId } from "./helpers";
import { linesSince, mark } from "../support/log-capture";
import { appendSteps, chat, offeredTools, parseSse, requests, rows, script, trajectory, user } from "./chat-helpers";

// Exec source is a redacted record wherever /chat keeps or shows it: the stored transcript, the
// trajectory, SSE events, the provider replay (within the call and in continuations) and the log.

const ANT = "fakeant/claude-fake";
const MODEL = "fakeoai/gpt-fake";
const ASK = [{ name: "ask_user", description: "Ask the user" }];
/** Registered secrets of the test gateway: both fake provider keys and both gateway tokens. */
const SECRETS = ["fake-key-openai", "fake-key-anthropic", "test-token-a", "test-token-b"];

const post = (session: string, turnId: string, body: unknown, token?: string) =>
  api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, body, token);

describe("/chat: the transcript stores exec source redacted", () => {
  it("credential literals are masked in provider replay and the trajectory; computations and boolean/null initializers stay", async () => {
    const session = sessionId();
    const secret = "sk-proj-Abc123Def456Ghi789Jkl012Mno345";
    const code = [
      `const API_KEY = "${secret}";`,
      "const API_TOKEN = computeToken();",
      "const DEBUG = true;",
      "let cached = null;",
      "function computeToken() { return 'x'; }",
      "return API_KEY.length;",
    ].join("\n");
    const s = await script([
      {
        toolCalls: [
          { id: "r1", name: "exec", input: { code } },
          { id: "r2", name: "ask_user", input: { q: "ok?" } },
        ],
      },
    ]);
    const first = await chat(session, {
      model: ANT,
      agentId: "off",
      messages: [{ role: "user", content: `${s.marker} go` }],
      clientTools: [{ name: "ask_user" }, { name: "exec_like" }],
    });
    // With code mode off there is no exec tool: the model's exec call is refused as unknown and fed back.
    expect(first.json.status).toBe("waiting");
    const t0 = await api("GET", `/v1/sessions/${session}/turns/${first.json.turnId}/trajectory`);
    expect(t0.json.calls[0]).toMatchObject({ callId: "r1", tool: "exec", status: "refused" });

    // Code mode on: the real exec source is stored redacted.
    const s2 = await script([
      {
        toolCalls: [
          { id: "x1", name: "exec", input: { code } },
          { id: "x2", name: "exec", input: { code: "return await ask_user({ q: 1 })" } },
        ],
      },
      { text: "done" },
    ]);
    const r = await chat(session, {
      model: ANT,
      messages: [{ role: "user", content: `${s2.marker} go` }],
      clientTools: [{ name: "ask_user" }],
    });
    expect(r.json.status).toBe("waiting");
    const turnId = r.json.turnId;
    const t = await api("GET", `/v1/sessions/${session}/turns/${turnId}/trajectory`);
    const stored = t.json.calls[0].input.code as string;
    expect(stored).not.toContain(secret);
    expect(stored).toContain("const API_TOKEN = computeToken();");
    expect(stored).toContain("const DEBUG = true;");
    expect(stored).toContain("let cached = null;");
    // The model read the real result (the key's length), computed from the original source.
    const [req1] = await requests(s2.id);
    expect(req1!.problems).toEqual([]);

    const p = r.json.pendingToolCalls[0];
    expect((await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: p.callId, value: 1 })).status).toBe(202);
    // Continuation replays the stored (redacted) transcript: the secret never goes back to the provider.
    const { appendSteps } = await import("./chat-helpers");
    await appendSteps(s2.id, [{ toolCalls: [{ id: "x3", name: "wait", input: { runId: p.runId } }] }, { text: "ok" }]);
    const done = await chat(session, { turnId });
    expect(done.json.status).toBe("completed");
    const replay = (await requests(s2.id))[1]!;
    expect(JSON.stringify(replay.body)).not.toContain(secret);
    expect(JSON.stringify(replay.body)).toContain("computeToken()");
  });
});

describe("/chat: credentials in exec source never leave the gateway", () => {
  const code = [
    "const a = 'fake-key-openai';",
    "const b = `test-token-a`;",
    "// fake-key-anthropic in a comment",
    "const c = { apiKey: 'test-token-b' };",
    'const API_KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno345";',
    "return a.length + b.length;",
  ].join("\n");
  const all = [...SECRETS, "sk-proj-Abc123Def456Ghi789Jkl012Mno345"];

  it("exec source secrets are masked in SSE events, the trajectory, continuation replay and logs", async () => {
    const session = sessionId();
    const from = mark();
    const s = await script([
      {
        toolCalls: [
          { id: "s1", name: "exec", input: { code } },
          { id: "s2", name: "exec", input: { command: code } },
          { id: "s3", name: "exec", input: { code: "return await ask_user({ q: 'ok?' })" } },
        ],
      },
    ]);
    const r = await chat(session, { model: ANT, clientTools: ASK, messages: user(s.marker) }, { accept: "text/event-stream" });
    const events = parseSse(r.text);
    const answer = events.at(-1)!.data.answer;
    expect(answer.status).toBe("waiting");
    const p = answer.pendingToolCalls[0];
    expect((await post(session, answer.turnId, { callId: p.callId, value: "yes" })).status).toBe(202);
    await appendSteps(s.id, [{ toolCalls: [{ id: "w", name: "wait", input: { runId: p.runId } }] }, { text: "done" }]);
    const done = await chat(session, { turnId: answer.turnId }, { accept: "text/event-stream" });
    const t = await trajectory(session, answer.turnId);
    expect(t.json.calls[0].input.code).toContain("const a = '***';");
    const replays = (await requests(s.id)).slice(1);
    expect(replays).toHaveLength(2);
    const logs = linesSince(from).join("\n");
    for (const secret of all) {
      expect(r.text).not.toContain(secret);
      expect(done.text).not.toContain(secret);
      expect(JSON.stringify(t.json)).not.toContain(secret);
      for (const replay of replays) expect(JSON.stringify(replay.body)).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });

  // Regression: within one /chat call the next model request replayed the exec call with its
  // original source (registered secrets and credential literals included) while the stored
  // transcript, and so every continuation's replay, had them masked: replay is built from the
  // redacted record, whether or not the loop paused in between.
  it("the next model request of the same /chat call replays exec source redacted, like the stored transcript", async () => {
    const s = await script([{ toolCalls: [{ id: "s1", name: "exec", input: { code } }] }, { text: "done" }]);
    const r = await chat(sessionId(), { model: ANT, messages: user(s.marker) });
    expect(r.json.status).toBe("completed");
    const replay = JSON.stringify((await requests(s.id))[1]!.body);
    expect(offeredTools((await requests(s.id))[1]!).sort()).toEqual(["exec", "wait"]);
    for (const secret of all) expect(replay).not.toContain(secret);
  });

  // Regression: exec arguments that are not valid JSON (typical when the model hits max tokens
  // mid-call) were stored raw: the transcript row and the SSE `tool_call_start` event carried the
  // credential literal the source held. Only the provider replay (`{}` for such calls) was safe.
  it("unparseable exec arguments holding a credential are stored and streamed redacted", async () => {
    const session = sessionId();
    const truncated = '{"code": "const API_KEY = \\"fake-key-openai\\"; const k2 = \\"sk-proj-Abc123Def456Ghi789Jkl012Mno345\\"; return 1';
    const s = await script([{ toolCalls: [{ id: "b1", name: "exec", input: truncated }], finishReason: "length" }, { text: "done" }]);
    const r = await chat(session, { model: MODEL, messages: user(s.marker) }, { accept: "text/event-stream" });
    expect(parseSse(r.text).at(-1)!.event).toBe("done");
    // The model was told what went wrong; the provider never got the raw text back.
    const replay = (await requests(s.id))[1]!;
    expect(JSON.stringify(replay.body)).not.toContain("fake-key-openai");
    const stored = JSON.stringify(await rows(session, "SELECT message FROM transcript"));
    for (const secret of ["fake-key-openai", "sk-proj-Abc123Def456Ghi789Jkl012Mno345"]) {
      expect(stored).not.toContain(secret);
      expect(r.text).not.toContain(secret);
    }
  });
});
