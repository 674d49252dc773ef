import { describe, expect, it } from "vitest";
import { api, expectHealthy, sessionId } from "./helpers";
import { chat, requests, rows, script, toolResults, user } from "./chat-helpers";

// What the model reads of a tool result fits its context: each result is projected to the chat
// model's per-result limit (a share of its context window), whichever tool produced it.

const MODEL = "fakeoai/gpt-fake";
const SMALL = "fakeoai/gpt-fake-small";
const ASK = [{ name: "ask_user", description: "Ask the user" }];
/** floor(contextWindow 8000 × 4 bytes/token × 0.3) for fakeoai/gpt-fake-small. */
const SMALL_RESULT_LIMIT = Math.floor(8000 * 4 * 0.3);

const post = (session: string, turnId: string, body: unknown, token?: string) =>
  api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, body, token);
const utf8 = (s: string) => new TextEncoder().encode(s).length;

describe("/chat: model-facing results fit the model's context", () => {
  it("a large exec result is projected to the small model's per-result limit, envelope first, marked truncated", async () => {
    const session = sessionId();
    const s = await script([
      { toolCalls: [{ id: "big", name: "exec", input: { code: "text('log line'); return 'x'.repeat(30000);" } }] },
      { text: "ok" },
    ]);
    const r = await chat(session, { model: "fakeoai/gpt-fake-small", messages: [{ role: "user", content: `${s.marker} big` }] });
    expect(r.json.status).toBe("completed");
    const [, second] = await requests(s.id);
    const [result] = toolResults(second!);
    const bytes = new TextEncoder().encode(result!.content).length;
    expect(bytes).toBeLessThanOrEqual(Math.floor(8000 * 4 * 0.3));
    const parsed = JSON.parse(result!.content);
    expect(parsed).toMatchObject({ status: "completed", value: { truncated: true }, telemetry: { controlTools: ["exec", "wait"] } });
    expect(parsed.value.omittedBytes).toBeGreaterThan(20000);
    const t = await api("GET", `/v1/sessions/${session}/turns/${r.json.turnId}/trajectory`);
    expect(t.json.limitsHit.map((l: any) => l.limit)).toContain("model_context");
  });

  it("the same result on a large-context model reaches the model whole", async () => {
    const s = await script([{ toolCalls: [{ id: "big", name: "exec", input: { code: "return 'x'.repeat(30000);" } }] }, { text: "ok" }]);
    await chat(sessionId(), { model: MODEL, messages: [{ role: "user", content: `${s.marker} big` }] });
    const [, second] = await requests(s.id);
    expect(JSON.parse(toolResults(second!)[0]!.content).value).toHaveLength(30000);
  });

  it("an enormous exec result is bounded for the transcript and projected for a small model", async () => {
    const session = sessionId();
    const code = "for (let i = 0; i < 2000; i++) text('line ' + i); return 'x'.repeat(5000000);";
    const s = await script([{ toolCalls: [{ id: "big", name: "exec", input: { code } }] }, { text: "ok" }]);
    const r = await chat(session, { model: SMALL, messages: user(s.marker) });
    expect(r.json.status).toBe("completed");
    const [result] = toolResults((await requests(s.id))[1]!);
    expect(utf8(result!.content)).toBeLessThanOrEqual(SMALL_RESULT_LIMIT);
    expect(JSON.parse(result!.content)).toMatchObject({ status: "completed", value: { truncated: true } });
    const [sum] = await rows<{ b: number }>(session, "SELECT SUM(bytes) AS b FROM transcript");
    expect(sum!.b).toBeLessThan(200_000);
    await expectHealthy(session, r.json.turnId);
  });

  // Regression: the result of a client tool the model called directly reached the model whole, even
  // on a small-context model (60 KB replayed to gpt-fake-small, whose per-result limit is 9 600
  // bytes), while every other outer result (exec, wait, direct tools) was projected.
  it("a direct client tool's result is projected to the small model's per-result limit", async () => {
    const session = sessionId();
    const s = await script([{ toolCalls: [{ id: "c1", name: "ask_user", input: { q: 1 } }] }, { text: "done" }]);
    const first = await chat(session, { model: SMALL, agentId: "off", clientTools: ASK, messages: user(s.marker) });
    expect((await post(session, first.json.turnId, { callId: first.json.pendingToolCalls[0].callId, value: "y".repeat(60_000) })).status).toBe(202);
    expect((await chat(session, { turnId: first.json.turnId })).json.status).toBe("completed");
    const [result] = toolResults((await requests(s.id))[1]!);
    expect(utf8(result!.content)).toBeLessThanOrEqual(SMALL_RESULT_LIMIT);
  });
});
