import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_RESPONSE_BYTES } from "../../src/limits";
import { sessionId } from "./helpers";
import { chat, parseSse, requests, script, toolResults } from "./chat-helpers";

/**
 * A /chat call that asks for the JSON answer shows nobody the model's text as it streams, so the
 * gateway reads each provider answer in large pieces (lean-sse.ts `whole`, workerd's readAtLeast)
 * instead of one read per flushed chunk: the same answer as a streamed /chat, within the same bound.
 */

const MODELS = ["fakeoai/gpt-fake", "fakeant/claude-fake"] as const;
/** Sixty text deltas: the fake server flushes each as its own chunk. */
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i} `);
const CODE = "return [3, 1, 2].sort().join('-') + ':' + 'y'.repeat(300)";
const steps = () => [{ toolCalls: [{ id: "tc_whole", name: "exec", input: { code: CODE } }] }, { text: WORDS }];

describe.each(MODELS)("/chat with %s, answer only", (model) => {
  it("reads each answer whole and gives what the streamed /chat gives", async () => {
    const a = await script(steps());
    const b = await script(steps());
    const whole = await chat(sessionId(), { model, messages: [{ role: "user", content: `${a.marker} go` }] });
    const streamed = await chat(sessionId(), { model, messages: [{ role: "user", content: `${b.marker} go` }] }, { accept: "text/event-stream" });
    expect(whole.status).toBe(200);
    expect(whole.json).toMatchObject({
      status: "completed",
      message: { role: "assistant", content: WORDS.join("") },
      meta: { assistantTurns: 2, toolSummary: { calls: 1, tools: ["exec"], failures: 0 }, stopReason: "final" },
    });
    const done = parseSse(streamed.text).find((e) => e.event === "done");
    expect(done?.data.answer.message).toEqual(whole.json.message);
    expect(done?.data.answer.meta.toolSummary).toEqual(whole.json.meta.toolSummary);
    // The tool call came whole out of its argument deltas: the cell ran the program and the model got its value back.
    const sent = toolResults((await requests(a.id))[1]!);
    expect(JSON.parse(sent[0]!.content)).toMatchObject({ status: "completed", value: `1-2-3:${"y".repeat(300)}` });
    const streamedSent = toolResults((await requests(b.id))[1]!);
    expect(JSON.parse(streamedSent[0]!.content)).toMatchObject({ status: "completed", value: `1-2-3:${"y".repeat(300)}` });
  });

  it("an answer streamed past MAX_PROVIDER_RESPONSE_BYTES fails naming the bound, read no further", async () => {
    const piece = 256 * 1024;
    const s = await script([{ text: "start ", repeatText: { text: "x".repeat(piece), times: Math.ceil(MAX_PROVIDER_RESPONSE_BYTES / piece) + 4 } }]);
    const r = await chat(sessionId(), { model, messages: [{ role: "user", content: `${s.marker} go` }] });
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({
      code: "provider_unavailable",
      message: `the answer of provider "${model.split("/")[0]}" (HTTP 200) was larger than ${MAX_PROVIDER_RESPONSE_BYTES} bytes; it was not read further`,
    });
  });
});
