import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { codeModeTools, openCodeModeTools } from "../../src/ai";
import { sessionId, TOKEN_A } from "./helpers";

// codemode-edge/ai with the AI SDK's own mock language model: generateText and streamText loops
// whose model calls `exec` (a cell calling a demo tool and an app-side client tool) and then
// answers with the cell's value. The tools' execute calls the real gateway through SELF.fetch.

const fetchViaGateway = (input: string, init: RequestInit) => SELF.fetch(input, init);
const base = { baseUrl: "http://gateway", token: TOKEN_A, fetch: fetchViaGateway };

/** A cell that needs the gateway (shipping_get, a demo tool) and the app (freight_rate, its client tool). */
const CODE =
  "const s = await shipping_get({ id: 'SH-1002' }); const rate = await freight_rate({ tons: s.tons }); return { id: s.id, cost: rate.perTon * s.tons };";

function appTools(calls: unknown[]) {
  return {
    freight_rate: tool({
      description: "The freight rate for a weight",
      inputSchema: jsonSchema<{ tons: number }>({ type: "object", properties: { tons: { type: "number" } }, required: ["tons"] }),
      execute: async (input: { tons: number }) => {
        calls.push(input);
        return { perTon: 10 };
      },
    }),
  };
}

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** The value of the exec tool result the model was sent (the AI SDK's prompt), if any. */
function execOutput(options: LanguageModelV4CallOptions): unknown {
  for (const message of options.prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) if (part.type === "tool-result" && part.toolName === "exec") return part.output;
  }
  return undefined;
}

describe("codeModeTools with the AI SDK's mock model", () => {
  it("offers the model exactly the gateway's exec and wait: descriptions and input schemas of the opened turn", async () => {
    const opened = await openCodeModeTools({ ...base, sessionId: sessionId(), clientTools: appTools([]) });
    expect(Object.keys(opened.tools)).toEqual(["exec", "wait"]);
    let offered: LanguageModelV4CallOptions["tools"];
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        offered = options.tools;
        return { content: [{ type: "text", text: "ok" }], finishReason: { unified: "stop", raw: "stop" }, usage: USAGE, warnings: [] };
      },
    });
    await generateText({ model, prompt: "hi", tools: opened.tools });
    expect(offered?.map((t) => (t.type === "function" ? { name: t.name, description: t.description, parameters: t.inputSchema } : t))).toEqual(
      opened.turn.tools,
    );
    // The app's client tool is the turn's (the cells call it), never a tool the model sees.
    expect(opened.turn.telemetry.catalogSources.client).toBe(1);
  });

  it("generateText: the model's exec runs a cell that calls a demo tool and the app's client tool, and the loop ends with the value", async () => {
    const calls: unknown[] = [];
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        const output = execOutput(options);
        if (output === undefined) {
          return {
            content: [{ type: "tool-call", toolCallId: "c1", toolName: "exec", input: JSON.stringify({ code: CODE }) }],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage: USAGE,
            warnings: [],
          };
        }
        return {
          content: [{ type: "text", text: `result: ${JSON.stringify(output)}` }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: USAGE,
          warnings: [],
        };
      },
    });
    const tools = await codeModeTools({ ...base, sessionId: sessionId(), clientTools: appTools(calls) });
    const r = await generateText({ model, prompt: "what does SH-1002 cost to ship?", tools, stopWhen: stepCountIs(5) });
    expect(calls).toEqual([{ tons: 18 }]);
    // One finished exec result: the client tool's round trip (deliver, wait) happened inside execute.
    const [result] = r.steps[0]!.toolResults;
    expect(result).toMatchObject({ toolName: "exec", output: { status: "completed", value: { id: "SH-1002", cost: 180 } } });
    expect(r.text).toContain('"cost":180');
    expect(r.steps).toHaveLength(2);
  });

  it("a later request of the same chat takes up the turn by its id: the same tools, its cells on that turn, no second turn", async () => {
    const session = sessionId();
    const first = await openCodeModeTools({ ...base, sessionId: session, clientTools: appTools([]) });
    const calls: unknown[] = [];
    const again = await openCodeModeTools({ ...base, sessionId: session, turnId: first.turnId, clientTools: appTools(calls) });
    expect(again.turnId).toBe(first.turnId);
    expect(again.turn).toEqual({ turnId: first.turnId, codeModeEngaged: true, tools: first.turn.tools });
    const result = await again.tools.exec!.execute!({ code: CODE }, { toolCallId: "c2", messages: [] } as never);
    expect(result).toMatchObject({ status: "completed", value: { id: "SH-1002", cost: 180 } });
    expect(calls).toEqual([{ tons: 18 }]);
    const trajectory = await SELF.fetch(`http://gateway/v1/sessions/${session}/turns/${first.turnId}/trajectory`, {
      headers: { authorization: `Bearer ${TOKEN_A}` },
    });
    expect(((await trajectory.json()) as { calls: { tool: string }[] }).calls.map((c) => c.tool)).toEqual(["exec", "wait"]);
    await expect(openCodeModeTools({ ...base, sessionId: session, turnId: "0f0e0d0c-0000-4000-8000-000000000000" })).rejects.toMatchObject({
      name: "CodemodeToolError",
      error: { code: "not_found" },
    });
    await expect(openCodeModeTools({ ...base, sessionId: session, turnId: first.turnId, turn: { agentId: "x" } } as never)).rejects.toThrow(
      TypeError,
    );
  });

  it("streamText: the same loop streamed, ending with the value", async () => {
    const calls: unknown[] = [];
    const stream = (parts: LanguageModelV4StreamPart[]) => ({ stream: convertArrayToReadableStream(parts) });
    const model = new MockLanguageModelV4({
      doStream: async (options) => {
        const output = execOutput(options);
        if (output === undefined) {
          return stream([
            { type: "stream-start", warnings: [] },
            { type: "tool-call", toolCallId: "c1", toolName: "exec", input: JSON.stringify({ code: CODE }) },
            { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: USAGE },
          ]);
        }
        return stream([
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: `result: ${JSON.stringify(output)}` },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
        ]);
      },
    });
    const tools = await codeModeTools({ ...base, sessionId: sessionId(), clientTools: appTools(calls) });
    const r = streamText({ model, prompt: "what does SH-1002 cost to ship?", tools, stopWhen: stepCountIs(5) });
    let text = "";
    for await (const delta of r.textStream) text += delta;
    expect(calls).toEqual([{ tons: 18 }]);
    expect(text).toContain('"cost":180');
    expect(await r.finishReason).toBe("stop");
  });

  it("a client tool whose execute throws is the cell's catchable rejection; a gateway refusal throws a typed error", async () => {
    const failing = {
      flaky: tool({
        description: "Always fails",
        inputSchema: jsonSchema<{ reason?: string }>({ type: "object", properties: { reason: { type: "string" } } }),
        execute: async (_input: { reason?: string }): Promise<string> => {
          throw new Error("the app is offline");
        },
      }),
    };
    const opened = await openCodeModeTools({ ...base, sessionId: sessionId(), clientTools: failing });
    const exec = opened.tools.exec!.execute!;
    const out = await exec(
      { code: "try { await flaky({}); } catch (e) { return e.message }" },
      { toolCallId: "x", messages: [], context: undefined },
    );
    expect(out).toMatchObject({ status: "completed", value: expect.stringContaining("the app is offline") });
    await expect(codeModeTools({ ...base, token: "wrong", sessionId: sessionId() })).rejects.toMatchObject({
      name: "CodemodeToolError",
      error: { code: "unauthorized", status: 401 },
    });
  });
});
