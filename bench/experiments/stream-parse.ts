/**
 * What the wire client costs per streamed event (issue 22, "avoid re-parsing streamed tool
 * arguments"): one model call's stream work as createModelClient does it (the observed fetch and its
 * stream stage, then the AI SDK's parser, every part read) over the bench's code-mode answer (the
 * `exec` program in 7-character argument deltas, ~130 events, as test/support/fake-provider sends it),
 * one chunk per event as a live stream arrives. Arms: "before" (the stage repairs usage only),
 * "after" (it also joins each call's argument deltas: tool-argument-coalescing.ts), and the same
 * answer with the deltas joined by the provider (the floor). Prints the AI SDK's part counts
 * (deterministic) and medians of interleaved rounds.
 *
 *   npx esbuild --bundle --platform=node --format=esm bench/experiments/stream-parse.ts --loader:.wasm=empty \
 *     --outfile=/tmp/stream-parse.mjs && npx node /tmp/stream-parse.mjs [--rounds=15] [--calls=40]
 */
import { anthropicEvents, openaiEvents, planAnswer } from "../../test/support/fake-provider/answers.mjs";
import type { ResolvedModel } from "../../src/providers";
import { observedFetch } from "../../src/providers/observed-fetch";
import { chainStages, toolArgumentCoalescing } from "../../src/providers/tool-argument-coalescing";
import { wireModel } from "../../src/providers/wire-model";
import { usageRepairStage } from "../../src/providers/wire-usage";
import { systemClock } from "../../src/runtime";
import { EXEC_CODE } from "../harness/chat-task";

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROUNDS = Number(arg("rounds", "15"));
const CALLS = Number(arg("calls", "40"));

type Wire = "openai" | "anthropic";
const API = { openai: "openai-completions", anthropic: "anthropic-messages" } as const;

function answer(wire: Wire): string[] {
  const step = {
    text: "Let me look all three up at once.",
    toolCalls: [{ id: wire === "openai" ? "call_1" : "toolu_1", name: "exec", input: { code: EXEC_CODE } }],
  };
  let n = 0;
  const plan = planAnswer(wire, step, { next: (p: string) => `${p}${++n}` });
  const meta = { id: wire === "openai" ? "chatcmpl-1" : "msg_1", created: 1_700_000_000 };
  const body = { model: "m", stream_options: { include_usage: true } };
  return wire === "openai" ? openaiEvents(plan, body, meta) : anthropicEvents(plan, body, meta);
}

/** The same events with each run of argument deltas of one call joined (by hand, as a provider could send them). */
function joined(wire: Wire, events: string[]): string[] {
  const out: string[] = [];
  let held: { obj: any; parts: string[] } | undefined;
  const flush = () => {
    if (!held) return;
    if (wire === "openai") held.obj.choices[0].delta.tool_calls[0].function.arguments = held.parts.join("");
    else held.obj.delta.partial_json = held.parts.join("");
    out.push(wire === "openai" ? `data: ${JSON.stringify(held.obj)}\n\n` : `event: content_block_delta\ndata: ${JSON.stringify(held.obj)}\n\n`);
    held = undefined;
  };
  for (const e of events) {
    const data = e.slice(e.indexOf("data: ") + 6).trim();
    const obj = data.startsWith("{") ? JSON.parse(data) : undefined;
    const tc = obj?.choices?.[0]?.delta?.tool_calls?.[0];
    const part =
      wire === "openai"
        ? tc && !tc.id
          ? tc.function.arguments
          : undefined
        : obj?.delta?.type === "input_json_delta"
          ? obj.delta.partial_json
          : undefined;
    if (part === undefined) {
      flush();
      out.push(e);
    } else if (held) held.parts.push(part);
    else held = { obj, parts: [part] };
  }
  flush();
  return out;
}

function model(wire: Wire): ResolvedModel {
  return {
    ref: "p/m",
    provider: "p",
    id: "m",
    wireModel: "m",
    api: API[wire],
    baseUrl: "https://p.example/v1",
    apiKey: "sk-bench-key-0123456789",
    contextWindow: 200_000,
  };
}

type Arm = "before" | "after" | "joined";

/**
 * One model call's wire-client work as createModelClient does it: the observed fetch with its stream
 * stage (usage repair only, as before; or with the coalescing), the AI SDK's doStream, every part read.
 * Returns the number of parts the SDK emitted.
 */
async function call(wire: Wire, events: Uint8Array[], coalesce: boolean): Promise<number> {
  const base = (async () =>
    new Response(
      new ReadableStream({
        start(c) {
          for (const b of events) c.enqueue(b);
          c.close();
        },
      }),
      { status: 200, headers: { "content-type": "text/event-stream" } },
    )) as unknown as typeof globalThis.fetch;
  const api = API[wire];
  const stage = () => (coalesce ? chainStages(usageRepairStage(api), toolArgumentCoalescing(api)) : usageRepairStage(api));
  const transport = observedFetch(base, systemClock, undefined, stage);
  const { stream } = await (
    await wireModel(model(wire), transport.fetch)
  ).doStream({
    prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: [{ type: "function", name: "exec", description: "run", inputSchema: { type: "object", properties: { code: { type: "string" } } } }],
    providerOptions: { anthropic: { toolStreaming: false } },
  });
  let parts = 0;
  const reader = stream.getReader();
  while (!(await reader.read()).done) parts++;
  return parts;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const wire of ["openai", "anthropic"] as const) {
  const encoder = new TextEncoder();
  const raw = answer(wire).map((e) => encoder.encode(e));
  const one = joined(wire, answer(wire)).map((e) => encoder.encode(e));
  const input: Record<Arm, [Uint8Array[], boolean]> = { before: [raw, false], after: [raw, true], joined: [one, false] };
  const parts = Object.fromEntries(await Promise.all((Object.keys(input) as Arm[]).map(async (k) => [k, await call(wire, ...input[k])]))) as Record<
    Arm,
    number
  >;
  for (let i = 0; i < 20; i++) for (const k of Object.keys(input) as Arm[]) await call(wire, ...input[k]); // warm-up
  const ms: Record<Arm, number[]> = { before: [], after: [], joined: [] };
  const ratio: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = (["before", "after", "joined"] as Arm[]).sort(() => (r % 2 ? 1 : -1));
    const t = {} as Record<Arm, number>;
    for (const k of order) {
      const s = performance.now();
      for (let i = 0; i < CALLS; i++) await call(wire, ...input[k]);
      t[k] = (performance.now() - s) / CALLS;
      ms[k].push(t[k]);
    }
    ratio.push(t.before / t.after);
  }
  console.log(
    `${wire}: ${raw.length} events one per chunk; AI SDK parts before ${parts.before}, after ${parts.after}, provider-joined ${parts.joined}; ` +
      `ms per call before ${median(ms.before).toFixed(3)}, after ${median(ms.after).toFixed(3)}, provider-joined (${one.length} events) ${median(ms.joined).toFixed(3)}; ` +
      `before/after ${median(ratio).toFixed(2)}× (medians of ${ROUNDS} interleaved rounds of ${CALLS} calls)`,
  );
}
