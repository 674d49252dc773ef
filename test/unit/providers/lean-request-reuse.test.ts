import { describe, expect, it } from "vitest";
import { chatCompletionsRequest } from "../../../src/providers/lean-chat-request";
import { messagesRequest } from "../../../src/providers/lean-messages-request";
import { jsonWithRaw, wireHeaders } from "../../../src/providers/lean-wire";
import type { ModelMessage, ResolvedModel } from "../../../src/providers";
import type { ModelTool } from "../../../src/turns";
import { modelFor } from "./reader-comparison";

// The request builders serialize a turn's tool definitions once, and Chat Completions each message
// once per way it is sent (issue 22, "build nothing twice"): a /chat call sends the same tools and
// a transcript that only grows, every round. What is reused must be exactly what a build from scratch
// gives: the same messages and tools as fresh objects (nothing cached for them) are the reference.

const tools: ModelTool[] = [
  { name: "exec", description: "run", parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] } },
  { name: "srv__my.tool (v2)", description: "an MCP tool with a name providers refuse", parameters: { type: "object" } },
];
const transcript: ModelMessage[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "add things" },
  { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "exec", input: { code: "return 1 + 1" } }] },
  { role: "tool", toolCallId: "call_1", toolName: "exec", content: '{"status":"completed","value":2}' },
  { role: "assistant", content: "and the MCP tool", toolCalls: [{ id: "call_2", name: "srv__my.tool (v2)", input: { q: "\u2713 </script>" } }] },
  { role: "tool", toolCallId: "call_2", toolName: "srv__my.tool (v2)", content: "failed", isError: true },
  { role: "assistant", content: "done" },
];
const fresh = <T>(x: T): T => structuredClone(x);
const wireA = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, "_");
const wireB = (name: string) => `t_${name.replace(/[^a-zA-Z0-9_-]/g, "")}`;
const chatModel = modelFor("openai-completions");
const reasoningModel: ResolvedModel = { ...chatModel, wireModel: "o3" };
const messagesModel = modelFor("anthropic-messages");

describe("request builders reuse what they serialized", () => {
  it("Chat Completions: every round of a growing transcript is the text a build from scratch gives", () => {
    for (let n = 1; n <= transcript.length; n++) {
      const reused = chatCompletionsRequest(chatModel, transcript.slice(0, n), tools, { temperature: 0.2 }, wireA)!;
      const scratch = chatCompletionsRequest(chatModel, fresh(transcript.slice(0, n)), fresh(tools), { temperature: 0.2 }, wireA)!;
      expect(reused.body).toBe(scratch.body);
      expect(JSON.parse(reused.body).messages).toHaveLength(n);
    }
  });

  it("Chat Completions: the same messages sent another way (system role, wire names) are serialized again", () => {
    const first = chatCompletionsRequest(chatModel, transcript, tools, {}, wireA)!;
    // A reasoning model sends the system prompt as `developer`; other wire names rename the calls and the tools.
    for (const [model, wire] of [
      [reasoningModel, wireA],
      [chatModel, wireB],
      [reasoningModel, wireB],
      [chatModel, wireA],
    ] as const) {
      const reused = chatCompletionsRequest(model, transcript, tools, {}, wire)!;
      expect(reused.body).toBe(chatCompletionsRequest(model, fresh(transcript), fresh(tools), {}, wire)!.body);
    }
    const body = JSON.parse(chatCompletionsRequest(reasoningModel, transcript, tools, {}, wireB)!.body);
    expect(body.messages[0].role).toBe("developer");
    expect(body.messages[4].tool_calls[0].function.name).toBe("t_srv__mytoolv2");
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["t_exec", "t_srv__mytoolv2"]);
    expect(JSON.parse(first.body).messages[0].role).toBe("system");
  });

  it("Messages: the same tools under other wire names are serialized again", () => {
    for (const wire of [wireA, wireB, wireA]) {
      const reused = messagesRequest(messagesModel, transcript, tools, { maxOutputTokens: 100 }, wire)!;
      expect(reused.body).toBe(messagesRequest(messagesModel, fresh(transcript), fresh(tools), { maxOutputTokens: 100 }, wire)!.body);
      expect(JSON.parse(reused.body).tools.map((t: { name: string }) => t.name)).toEqual(tools.map((t) => wire(t.name)));
    }
  });

  it("headers are built once per model key and wire, and each call gets its own copy", () => {
    const a = wireHeaders("openai-completions", { authorization: "Bearer key-one-0123456789" });
    a["x-changed"] = "by the caller";
    const again = wireHeaders("openai-completions", { authorization: "Bearer key-one-0123456789" });
    expect(again).toEqual({ authorization: "Bearer key-one-0123456789", "content-type": "application/json", "user-agent": again["user-agent"] });
    expect(wireHeaders("openai-completions", { authorization: "Bearer key-two-0123456789" }).authorization).toBe("Bearer key-two-0123456789");
    const anthropic = wireHeaders("anthropic-messages", { "anthropic-version": "2023-06-01", "x-api-key": "key-one-0123456789" });
    expect(anthropic["user-agent"]).toMatch(/^ai-sdk-anthropic\//);
    expect(Object.keys(anthropic)).toEqual(["anthropic-version", "content-type", "user-agent", "x-api-key"]);
  });

  it("jsonWithRaw is JSON.stringify of the whole object, raw members in their place", () => {
    const cases: Array<[Record<string, unknown>, Array<[string, unknown]>]> = [
      [
        { model: "m", temperature: undefined, top_p: 0.5 },
        [
          ["messages", [{ a: "\u2713\n" }]],
          ["tools", undefined],
          ["stream", true],
        ],
      ],
      [{}, [["only", { x: [1, null] }]]],
      [{}, []],
      [{ a: 1 }, []],
      [
        {},
        [
          ["skipped", undefined],
          ['we"ird', "v"],
        ],
      ],
    ];
    for (const [head, members] of cases) {
      const raw = members.map(([k, v]) => [k, v === undefined ? undefined : JSON.stringify(v)] as const);
      expect(jsonWithRaw(head, raw)).toBe(JSON.stringify({ ...head, ...Object.fromEntries(members) }));
    }
  });
});
