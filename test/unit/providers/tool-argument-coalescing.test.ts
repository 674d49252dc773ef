import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../../src/runtime";
import { createModelClient } from "../../../src/providers/create-model-client";
import { observedFetch } from "../../../src/providers/observed-fetch";
import { chainStages, MAX_JOINED_CHARS, toolArgumentCoalescing } from "../../../src/providers/tool-argument-coalescing";
import { usageRepairStage } from "../../../src/providers/wire-usage";
import { wireModel } from "../../../src/providers/wire-model";
import type { ModelEvent, ResolvedModel } from "../../../src/providers";
import { anthropicEvents, fragments, openaiEvents, planAnswer } from "../../support/fake-provider/answers.mjs";
import { modelFor } from "./reader-comparison";

// A tool call's argument deltas reach the AI SDK as one event: the wire client's result (tool
// calls, text, usage, finish reason, and the arguments its deltas add up to) is the same as from
// the stream as the provider sent it, and it parses a handful of events instead of one per delta.

type Api = ResolvedModel["api"];
const WIRE = { "openai-completions": "openai", "anthropic-messages": "anthropic" } as const;
const encoder = new TextEncoder();

/** Code with escapes, quotes, newlines and characters of 2, 3 and 4 UTF-8 bytes (fragments split pairs and escapes). */
const CODE = [
  '// café — naïve 😀 "quoted" \\ back\\slash',
  "const names = Object.keys(MCP.workspace);",
  'return { greeting: "héllo 🌍\\n", tab: "\\t", list: names.filter((n) => n.includes("€")) };',
].join("\n");

function answer(
  api: Api,
  calls: Array<{ id: string; name: string; input: unknown }>,
  text = "Let me look.",
  usage = { input: 120, output: 45 },
): string[] {
  const wire = WIRE[api];
  const plan = planAnswer(wire, { text, toolCalls: calls, usage }, { next: (p: string) => `${p}x` });
  const body = { model: "m", stream_options: { include_usage: true } };
  const meta = { id: wire === "openai" ? "chatcmpl-1" : "msg_1", created: 1_700_000_000 };
  return wire === "openai" ? openaiEvents(plan, body, meta) : anthropicEvents(plan, body, meta);
}

/** The stream cut into chunks of `size` bytes (events, lines and characters split across chunks), or one per event. */
function chunked(events: string[], size?: number): Uint8Array[] {
  if (size === undefined) return events.map((e) => encoder.encode(e));
  const bytes = encoder.encode(events.join(""));
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

const body = (parts: Uint8Array[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });

const answering = (parts: Uint8Array[]) =>
  (async () => new Response(body(parts), { status: 200, headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch;

/** What the stream stage lets out, as text. */
async function staged(api: Api, parts: Uint8Array[]): Promise<string> {
  const t = observedFetch(answering(parts), systemClock, undefined, () => chainStages(usageRepairStage(api), toolArgumentCoalescing(api)));
  return (await t.fetch("https://p.example/v1", { method: "POST", body: "{}" })).text();
}

const dataEvents = (text: string) => text.split("\n").filter((l) => l.startsWith("data:")).length;

const model = modelFor;

/**
 * The AI SDK's parts for a stream: every part but the argument deltas and raw chunks, and each call's
 * deltas joined (what they add up to, whichever way they were cut).
 */
async function sdkResult(api: Api, parts: Uint8Array[]) {
  const wire = await wireModel(model(api), answering(parts));
  const { stream } = await wire.doStream({
    prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: [{ type: "function", name: "exec", description: "run", inputSchema: { type: "object", properties: { code: { type: "string" } } } }],
    providerOptions: { anthropic: { toolStreaming: false } },
  });
  const kept: LanguageModelV4StreamPart[] = [];
  const deltas = new Map<string, string>();
  const reader = stream.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    const part = next.value;
    if (part.type === "tool-input-delta") deltas.set(part.id, (deltas.get(part.id) ?? "") + part.delta);
    else if (part.type === "response-metadata") kept.push({ ...part, timestamp: undefined });
    else kept.push(part);
  }
  return { parts: kept, deltas: Object.fromEntries(deltas) };
}

/** The SDK's result on the stream as sent, and on what our stage makes of it. */
async function both(api: Api, parts: Uint8Array[]) {
  const out = await staged(api, parts);
  return { original: await sdkResult(api, parts), coalesced: await sdkResult(api, [encoder.encode(out)]), out };
}

const APIS: Api[] = ["openai-completions", "anthropic-messages"];

describe("tool argument deltas are joined before the wire client parses them", () => {
  it.each(APIS)("%s: the same tool call, text, usage and finish from far fewer events", async (api) => {
    const events = answer(api, [{ id: "call_1", name: "exec", input: { code: CODE } }]);
    const { original, coalesced, out } = await both(api, chunked(events));
    expect(coalesced).toEqual(original);
    const call = original.parts.find((p) => p.type === "tool-call");
    expect(call && JSON.parse((call as { input: string }).input)).toEqual({ code: CODE });
    expect(original.parts.find((p) => p.type === "finish")).toMatchObject({ usage: { outputTokens: { total: 45 } } });
    // Every delta of the call went into one event: only the events around it are left.
    expect(dataEvents(events.join(""))).toBeGreaterThan(fragments(JSON.stringify({ code: CODE })).length);
    expect(dataEvents(out)).toBe(
      dataEvents(events.join("")) - fragments(JSON.stringify({ code: CODE })).length + (api === "openai-completions" ? 1 : 0),
    );
  });

  it.each(APIS.flatMap((api) => [1, 3, 5, 64].map((size) => [api, size] as const)))(
    "%s: chunks of %i bytes, splitting characters, escapes and events, give the same result",
    async (api, size) => {
      const events = answer(api, [{ id: "call_1", name: "exec", input: { code: CODE } }]);
      const { original, coalesced } = await both(api, chunked(events, size));
      expect(coalesced).toEqual(original);
      expect(coalesced).toEqual((await both(api, chunked(events))).original);
    },
  );

  it("Chat Completions: parallel calls whose deltas alternate between index 0 and 1 give the same calls", async () => {
    const chunk = (call: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { tool_calls: [call] }, logprobs: null, finish_reason: finish }] })}\n\n`;
    const a = fragments(JSON.stringify({ code: CODE }), 5);
    const b = fragments(JSON.stringify({ code: "return 'b' + \"é\"" }), 3);
    const events = [
      chunk({ index: 0, id: "call_a", type: "function", function: { name: "exec", arguments: "" } }),
      chunk({ index: 1, id: "call_b", type: "function", function: { name: "exec", arguments: "" } }),
    ];
    // Alternating one by one, then in runs of two and three.
    for (let i = 0, j = 0, run = 1; i < a.length || j < b.length; run = (run % 3) + 1) {
      for (let k = 0; k < run && i < a.length; k++) events.push(chunk({ index: 0, function: { arguments: a[i++] } }));
      for (let k = 0; k < run && j < b.length; k++) events.push(chunk({ index: 1, function: { arguments: b[j++] } }));
    }
    events.push(
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })}\n\n`,
      "data: [DONE]\n\n",
    );
    const { original, coalesced, out } = await both("openai-completions", chunked(events));
    expect(coalesced).toEqual(original);
    expect(original.parts.filter((p) => p.type === "tool-call").map((p) => JSON.parse((p as { input: string }).input))).toEqual([
      { code: CODE },
      { code: "return 'b' + \"é\"" },
    ]);
    expect(dataEvents(out)).toBeLessThan(events.length);
  });

  it.each(APIS)("%s: a stream cut in the middle of the arguments gives the same partial result", async (api) => {
    const events = answer(api, [{ id: "call_1", name: "exec", input: { code: CODE } }]);
    const cut = events.slice(0, Math.floor(events.length / 2));
    for (const size of [undefined, 7]) {
      const { original, coalesced } = await both(api, chunked(cut, size));
      expect(coalesced).toEqual(original);
    }
    // Cut inside an event too (its bytes pass as they came).
    const partial = [...cut, events[cut.length]!.slice(0, 30)];
    const { original, coalesced } = await both(api, chunked(partial));
    expect(coalesced).toEqual(original);
  });

  it.each(APIS)("%s: a stream without argument deltas passes byte for byte", async (api) => {
    const events = answer(api, [], 'Plain text, no tools: "quoted" é 😀');
    for (const size of [undefined, 1, 9]) expect(await staged(api, chunked(events, size))).toBe(events.join(""));
  });

  it("Chat Completions: a second call starting at the same index turns joining off at that index", async () => {
    const chunk = (call: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: "c", created: 1, model: "m", choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }] })}\n\n`;
    const events = [
      chunk({ index: 0, id: "call_a", type: "function", function: { name: "exec", arguments: '{"code":' } }),
      chunk({ index: 0, function: { arguments: '"1"}' } }),
      chunk({ index: 0, id: "call_b", type: "function", function: { name: "exec", arguments: "" } }),
      chunk({ index: 0, function: { arguments: '{"code":' } }),
      chunk({ index: 0, function: { arguments: '"2"}' } }),
      chunk({ index: 0, function: { arguments: "{}" } }),
      `data: ${JSON.stringify({ id: "c", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })}\n\n`,
    ];
    const { original, coalesced, out } = await both("openai-completions", chunked(events));
    expect(coalesced).toEqual(original);
    expect(out).toBe(events.join(""));
  });

  it("a continuation the wire client would refuse is not hidden in a joined event", async () => {
    const chunk = (created: unknown, call: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: "c", created, model: "m", choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }] })}\n\n`;
    const events = [
      chunk(1, { index: 0, id: "call_a", type: "function", function: { name: "exec", arguments: "" } }),
      chunk(1, { index: 0, function: { arguments: '{"code":' } }),
      chunk("not a number", { index: 0, function: { arguments: '"1"}' } }),
      `data: ${JSON.stringify({ id: "c", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })}\n\n`,
    ];
    const { original, coalesced } = await both("openai-completions", chunked(events));
    expect(coalesced).toEqual(original);
    expect(original.parts.some((p) => p.type === "error")).toBe(true);
  });

  it("a stream with CRLF line ends passes untouched", async () => {
    const events = answer("anthropic-messages", [{ id: "toolu_1", name: "exec", input: { code: CODE } }]).map((e) => e.replaceAll("\n", "\r\n"));
    for (const size of [undefined, 4]) expect(await staged("anthropic-messages", chunked(events, size))).toBe(events.join(""));
  });

  it.each(APIS)("%s: a run is sent once it holds MAX_JOINED_CHARS of arguments", async (api) => {
    const big = "x".repeat(MAX_JOINED_CHARS * 2 + 100);
    const plan = answer(api, [{ id: "call_1", name: "exec", input: { code: big } }]);
    // Re-cut the argument deltas at 1,000 characters to keep the stream small.
    const events = plan
      .filter((e) => !e.includes('"arguments":"') || e.includes('"name"'))
      .filter((e) => !e.includes('"partial_json":"') || e.includes('"partial_json":""'));
    const at = events.findIndex((e) => (api === "openai-completions" ? e.includes('"name"') : e.includes('"partial_json":""'))) + 1;
    const pieces = fragments(JSON.stringify({ code: big }), 1000).map((part) =>
      api === "openai-completions"
        ? `data: ${JSON.stringify({ id: "c", created: 1, model: "m", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: part } }] }, finish_reason: null }] })}\n\n`
        : `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: part } })}\n\n`,
    );
    events.splice(at, 0, ...pieces);
    const { original, coalesced, out } = await both(api, chunked(events));
    expect(coalesced).toEqual(original);
    expect(JSON.parse((original.parts.find((p) => p.type === "tool-call") as { input: string }).input)).toEqual({ code: big });
    // Twice MAX_JOINED_CHARS and a little in runs of at most MAX_JOINED_CHARS: three events (Messages
    // joins the block's empty first delta too).
    const joined = pieces.length + (api === "anthropic-messages" ? 1 : 0);
    expect(dataEvents(out)).toBe(dataEvents(events.join("")) - joined + 3);
  });
});

describe("a model call through createModelClient", () => {
  it.each(APIS)("%s: the same events whether the answer comes whole or a byte at a time", async (api) => {
    const events = answer(api, [{ id: "call_1", name: "exec", input: { code: CODE } }]);
    const run = async (parts: Uint8Array[]) => {
      const client = createModelClient(model(api), { timeoutMs: 10_000, fetch: answering(parts) });
      const out: ModelEvent[] = [];
      for await (const e of client.stream({
        messages: [{ role: "user", content: "hi" }],
        tools: [{ name: "exec", description: "run", parameters: { type: "object", properties: { code: { type: "string" } } } }],
        signal: new AbortController().signal,
      }))
        out.push(e);
      return out;
    };
    const whole = await run([encoder.encode(events.join(""))]);
    expect(await run(chunked(events, 1))).toEqual(whole);
    expect(whole.find((e) => e.type === "tool-call")).toMatchObject({ call: { name: "exec", input: { code: CODE } } });
    expect(whole.at(-1)).toMatchObject({ type: "finish", finishReason: "tool-calls", usage: { outputTokens: 45 } });
  });
});
