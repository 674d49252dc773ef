import { describe, expect, it } from "vitest";
import { toolArgumentCoalescing } from "../../../src/providers/tool-argument-coalescing";
import type { ResolvedModel } from "../../../src/providers";

// Continuations of the shapes vendors send are recognized by their text, without parsing each
// chunk: the joined event is the same as the parsing path writes (the first chunk with the joined
// arguments), and a text that is not exactly such JSON is judged by parsing, as before.

type Api = ResolvedModel["api"];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function through(api: Api, events: string[]): string {
  const stage = toolArgumentCoalescing(api);
  let out = "";
  const enqueue = (b: Uint8Array) => (out += decoder.decode(b));
  for (const e of events) stage.transform(encoder.encode(`${e}\n\n`), enqueue);
  stage.flush(enqueue);
  return out;
}

const PARTS = ['{"code":"const s = \\"caf', "é 😀\\\\n", '\\u0041\\t/\\/"', "}"];
const openAiStart = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"exec","arguments":""}}]},"logprobs":null,"finish_reason":null}]}`;
const openAiFinish = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`;

/** What the parsing path writes for a run: the first continuation with the joined arguments. */
function joinedOpenAi(conts: string[]): string {
  const first = JSON.parse(conts[0]!.slice(6));
  first.choices[0].delta.tool_calls[0].function.arguments = conts
    .map((c) => JSON.parse(c.slice(6)).choices[0].delta.tool_calls[0].function.arguments)
    .join("");
  return `data: ${JSON.stringify(first)}\n\n`;
}

describe("coalescing continuations recognized by their text", () => {
  const shapes: Record<string, (args: string) => string> = {
    "the fake provider's": (a) =>
      `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":${a}}}]},"logprobs":null,"finish_reason":null}]}`,
    "OpenAI's (service tier, usage null, obfuscation)": (a) =>
      `data: {"id":"c1","object":"chat.completion.chunk","created":1700000000,"model":"gpt","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":${a}}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x\\u00e9"}`,
    "a spaced one (parsed)": (a) =>
      `data: {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ${a}}}]}, "logprobs": null, "finish_reason": null}]}`,
  };
  for (const [name, shape] of Object.entries(shapes)) {
    it(`Chat Completions, ${name}: one event with the first chunk and the joined arguments`, () => {
      const conts = PARTS.map((p) => shape(JSON.stringify(p)));
      const out = through("openai-completions", [openAiStart, ...conts, openAiFinish]);
      expect(out).toBe(`${openAiStart}\n\n${joinedOpenAi(conts)}${openAiFinish}\n\n`);
      expect(JSON.parse(JSON.parse(joinedOpenAi(conts).slice(6)).choices[0].delta.tool_calls[0].function.arguments)).toEqual(
        JSON.parse(PARTS.join("")),
      );
    });
  }

  it("text that is not JSON (a leading zero, a raw control character, a bad escape) is never joined", () => {
    const bad = [
      `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":00,"function":{"arguments":"a"}}]},"logprobs":null,"finish_reason":null}]}`,
      `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a\tb"}}]},"logprobs":null,"finish_reason":null}]}`,
      `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a\\xb"}}]},"logprobs":null,"finish_reason":null}]}`,
    ];
    const events = [openAiStart, ...bad, ...bad, openAiFinish];
    expect(through("openai-completions", events)).toBe(events.map((e) => `${e}\n\n`).join(""));
  });

  it("Messages: input_json_delta events join into the first with the joined partial JSON, named or not", () => {
    for (const named of [true, false]) {
      const head = named ? "event: content_block_delta\n" : "";
      const conts = PARTS.map(
        (p) => `${head}data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(p)}}}`,
      );
      const stop = `event: content_block_stop\ndata: {"type":"content_block_stop","index":1}`;
      const joined = { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: PARTS.join("") } };
      expect(through("anthropic-messages", [...conts, stop])).toBe(`${head}data: ${JSON.stringify(joined)}\n\n${stop}\n\n`);
    }
  });
});
