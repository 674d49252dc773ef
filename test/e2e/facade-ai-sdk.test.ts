import { describe, expect, it } from "vitest";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, streamText, tool, type ModelMessage } from "ai";
import { sessionId } from "./helpers";
import { appendSteps, requests, script, toolResults } from "./chat-helpers";
import { ASK_CODE, GATEWAY, parkedRunId, viaGateway } from "./facade-helpers";
import { TOKEN_A } from "./helpers";

// The AI SDK's OpenAI-compatible provider against /v1/chat/completions: generateText, streamText
// and a client tool (a tool without execute) answered across two calls.

const USAGE = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 };

function provider(headers: Record<string, string> = {}) {
  return createOpenAICompatible({ name: "codemode", baseURL: `${GATEWAY}/v1`, apiKey: TOKEN_A, fetch: viaGateway, includeUsage: true, headers });
}

describe("/v1/chat/completions with the AI SDK's OpenAI-compatible provider", () => {
  it("generateText gets the final answer and the turn's usage", async () => {
    const s = await script([
      { toolCalls: [{ id: "e1", name: "exec", input: { code: "return 'x'.repeat(3)" } }], usage: USAGE },
      { text: "xxx it is", usage: USAGE },
    ]);
    const r = await generateText({ model: provider()("fakeoai/gpt-fake"), prompt: `${s.marker} repeat`, maxRetries: 0 });
    expect(r.text).toBe("xxx it is");
    expect(r.finishReason).toBe("stop");
    expect(r.usage).toMatchObject({ inputTokens: 200, outputTokens: 40 });
  });

  it("streamText streams the answer and its final usage", async () => {
    const s = await script([{ text: ["str", "eam", "ed"], usage: USAGE }]);
    const r = streamText({ model: provider()("fakeoai/gpt-fake"), prompt: `${s.marker} stream`, maxRetries: 0 });
    let text = "";
    for await (const delta of r.textStream) text += delta;
    expect(text).toBe("streamed");
    expect(await r.usage).toMatchObject({ inputTokens: 100, outputTokens: 20 });
    expect(await r.finishReason).toBe("stop");
  });

  it("a tool without execute is a client tool: its call comes back, the result continues the same cell", async () => {
    const session = sessionId();
    const model = provider({ "x-session-id": session })("fakeoai/gpt-fake");
    const s = await script([{ toolCalls: [{ id: "e1", name: "exec", input: { code: ASK_CODE } }] }]);
    const tools = {
      ask_user: tool({
        description: "Ask the user",
        inputSchema: jsonSchema<{ question: string }>({ type: "object", properties: { question: { type: "string" } } }),
      }),
    };
    const messages: ModelMessage[] = [{ role: "user", content: `${s.marker} greet me` }];
    const first = await generateText({ model, messages, tools, maxRetries: 0 });
    expect(first.finishReason).toBe("tool-calls");
    const [call] = first.toolCalls;
    expect(call).toMatchObject({ toolName: "ask_user", input: { question: "Name?" } });

    const runId = await parkedRunId(session);
    await appendSteps(s.id, [{ toolCalls: [{ id: "w1", name: "wait", input: { runId } }] }, { text: "Greeted Ada." }]);
    const second = await generateText({
      model,
      tools,
      maxRetries: 0,
      messages: [
        ...messages,
        ...first.response.messages,
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: call!.toolCallId, toolName: "ask_user", output: { type: "text", value: "Ada" } }],
        },
      ],
    });
    expect(second.text).toBe("Greeted Ada.");
    const waited = toolResults((await requests(s.id)).at(-1)!).find((t) => t.id === "w1")!;
    expect(JSON.parse(waited.content)).toMatchObject({ status: "completed", value: "Hello, Ada" });
  });
});
