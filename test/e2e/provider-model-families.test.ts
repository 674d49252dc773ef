import { describe, expect, it } from "vitest";
import { sessionId } from "./helpers";
import { chat, requests, script, toolResults, user } from "./chat-helpers";

// /chat on model ids whose requests the AI SDK shapes per family, which the gateway now builds
// itself (lean-chat-request.ts, lean-messages-request.ts): the fake provider server validates each
// request as the vendor would and records it, so what reached it is the wire the rules call for.

const EXEC_THEN_DONE = [{ toolCalls: [{ id: "c1", name: "exec", input: { code: "return 1 + 1" } }] }, { text: "done" }];

describe("requests of the model families the AI SDK shapes", () => {
  it("a reasoning model (o3): the system prompt as developer, max_completion_tokens, no sampling settings", async () => {
    const session = sessionId();
    const s = await script(EXEC_THEN_DONE);
    const r = await chat(session, {
      model: "fakeoai/o3",
      messages: [{ role: "system", content: "be brief" }, ...user(s.marker)],
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 500,
    });
    expect(r.json).toMatchObject({ status: "completed" });
    const sent = await requests(s.id);
    expect(sent).toHaveLength(2);
    for (const req of sent) {
      expect(req.problems).toEqual([]);
      expect(req.body).toMatchObject({ model: "o3", max_completion_tokens: 500, stream: true });
      expect([req.body.max_tokens, req.body.temperature, req.body.top_p]).toEqual([undefined, undefined, undefined]);
      expect(req.body.messages[0]).toEqual({ role: "developer", content: "be brief" });
    }
    expect(toolResults(sent[1]!)).toMatchObject([{ id: "c1" }]);
  });

  it("claude-sonnet-4-5: max_tokens within its ceiling, temperature without top_p, the structured-outputs beta, no eager input streaming", async () => {
    const session = sessionId();
    const s = await script(EXEC_THEN_DONE);
    const r = await chat(session, {
      model: "fakeant/claude-sonnet-4-5",
      messages: [{ role: "system", content: "be brief" }, ...user(s.marker)],
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 100_000,
    });
    expect(r.json).toMatchObject({ status: "completed" });
    const sent = await requests(s.id);
    expect(sent).toHaveLength(2);
    for (const req of sent) {
      expect(req.problems).toEqual([]);
      expect(req.body).toMatchObject({ model: "claude-sonnet-4-5", max_tokens: 64_000, temperature: 0.3, stream: true });
      expect(req.body.top_p).toBeUndefined();
      expect(req.body.system).toEqual([{ type: "text", text: "be brief" }]);
      expect(req.headers["anthropic-beta"]).toBe("structured-outputs-2025-11-13");
      expect(req.headers["anthropic-version"]).toBe("2023-06-01");
      expect(req.body.tools.every((t: Record<string, unknown>) => !("eager_input_streaming" in t))).toBe(true);
    }
    expect(toolResults(sent[1]!)).toMatchObject([{ id: "c1" }]);
  });
});
