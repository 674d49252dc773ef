import { describe, expect, it } from "vitest";
import type { ModelRequest, ResolvedModel } from "../../../src/providers";
import type { ModelTool } from "../../../src/turns";
import { modelFor } from "./reader-comparison";
import { callWith, respond, restoreLeanWire } from "./request-comparison";

// Hostile inputs to the requests we build ourselves (lean-chat-request.ts, lean-messages-request.ts,
// lean-wire.ts): a key `Headers` refuses, tool schemas with prototype keys or of no object type,
// sampling values out of range, system messages where no system message belongs. For each, the
// call ends exactly as the AI SDK's path ends it (the reference): the same bytes sent, the same
// ProviderError, never a raw exception (which the agent loop would turn into an internal error).

restoreLeanWire();
const exec: ModelTool = { name: "exec", description: "run", parameters: { type: "object", properties: { code: { type: "string" } } } };
const hi = (over: Partial<Omit<ModelRequest, "signal">> = {}) => ({ messages: [{ role: "user" as const, content: "hi" }], tools: [exec], ...over });
const ok = respond("data: [DONE]\n\n", 200, { "content-type": "text/event-stream" });
const tool = (name: string, parameters: unknown): ModelTool => ({ name, description: "d", parameters: parameters as ModelTool["parameters"] });

/** Keys a provider config may hold by mistake (a pasted curly quote, a line break, a NUL): `Headers` refuses each. */
const UNSENDABLE_KEYS = ["sk-test-0123\u2019456789", "sk-test-0123\n456789", "sk-test-0123\u0000456789"];

const CASES: Array<[string, Omit<ModelRequest, "signal">]> = [
  ["temperature NaN", hi({ temperature: NaN })],
  ["temperature and topP far above range", hi({ temperature: 5, topP: 7 })],
  ["a negative temperature", hi({ temperature: -3 })],
  ["a negative maxOutputTokens", hi({ maxOutputTokens: -1 })],
  ["a fractional maxOutputTokens", hi({ maxOutputTokens: 1.5 })],
  ["a tool schema that is a string", hi({ tools: [tool("t", "x")] })],
  ["a tool schema that is null", hi({ tools: [tool("t", null)] })],
  ["a tool schema that is an array", hi({ tools: [tool("t", [1])] })],
  ["a tool without a description", hi({ tools: [{ name: "t", description: undefined as never, parameters: { type: "object" } }] })],
  [
    "__proto__ and constructor as tool names, property names and references",
    hi({
      tools: [
        tool(
          "__proto__",
          JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"allOf":[{"$ref":"#/$defs/constructor"}]}}}'),
        ),
        tool("constructor", JSON.parse('{"allOf":[{"$ref":"#/$defs/__proto__"}],"$defs":{}}')),
      ],
    }),
  ],
  ["only a system message", { messages: [{ role: "system", content: "s" }], tools: [] }],
  ["no messages at all", { messages: [], tools: [] }],
  [
    "system messages mid-conversation and last",
    {
      messages: [
        { role: "user", content: "a" },
        { role: "system", content: "s1" },
        { role: "assistant", content: " x " },
        { role: "system", content: "s2" },
      ],
      tools: [],
    },
  ],
  [
    "a tool result first, an assistant of whitespace last",
    {
      messages: [
        { role: "tool", toolCallId: "c", toolName: "exec", content: "r" },
        { role: "assistant", content: "  " },
      ],
      tools: [],
    },
  ],
];

const IDS = { "openai-completions": ["gpt-4o", "o3", "gpt-5.6"], "anthropic-messages": ["claude-sonnet-4-5", "claude-opus-4-7", "x-model"] } as const;

for (const api of ["openai-completions", "anthropic-messages"] as const) {
  const model = (id: string, over: Partial<ResolvedModel> = {}): ResolvedModel => ({ ...modelFor(api), wireModel: id, ...over });

  describe(`${api}: a key the request cannot carry fails as the SDK's call fails, masked, nothing sent`, () => {
    for (const apiKey of UNSENDABLE_KEYS) {
      it(`key ${JSON.stringify(apiKey)}`, async () => {
        const sdk = await callWith(false, model(IDS[api][0], { apiKey }), hi(), ok);
        const lean = await callWith(true, model(IDS[api][0], { apiKey }), hi(), ok);
        expect(sdk.error?.code).toBe("provider_error");
        expect(lean).toEqual(sdk);
        expect(lean.sent).toEqual([]);
        expect(lean.error!.message).not.toContain(apiKey);
      });
    }
  });

  describe(`${api}: hostile inputs give the SDK's request or failure`, () => {
    for (const [name, request] of CASES)
      for (const id of IDS[api])
        it(`${name} (${id})`, async () => {
          const sdk = await callWith(false, model(id), request, ok);
          const lean = await callWith(true, model(id), request, ok);
          expect(lean).toEqual(sdk);
        });
  });
}
