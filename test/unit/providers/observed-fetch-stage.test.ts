import { describe, expect, it } from "vitest";
import { MAX_PROVIDER_RESPONSE_BYTES } from "../../../src/limits";
import { systemClock } from "../../../src/runtime";
import { observedFetch } from "../../../src/providers/observed-fetch";
import { usageRepair, usageRepairStage } from "../../../src/providers/wire-usage";

// The byte bound and the usage repair run in one pass over each chunk of a provider's event
// stream: the same bytes come out as when the repair was a stream of its own after the bound.

const encoder = new TextEncoder();

const SSE = [
  'data: {"choices":[{"index":0,"delta":{"content":"hel"}}]}\n\n',
  'data: {"choices":[{"index":0,"delta":{"content":"lo \\"usage\\""}}]}\n\n',
  'data: {"choices":[],"usage":{"prompt_tokens":"12","completion_tokens":3}}\n\n',
  "data: [DONE]\n\n",
].join("");

/** The stream cut into chunks of `size` bytes (lines and characters split across chunks). */
function chunks(text: string, size: number): Uint8Array[] {
  const bytes = encoder.encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

function stream(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });
}

const answering = (parts: Uint8Array[], status = 200) =>
  (async () => new Response(stream(parts), { status, headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch;

async function fused(parts: Uint8Array[], status = 200, observer?: { sseEvent(data: string): void }): Promise<string> {
  const t = observedFetch(answering(parts, status), systemClock, observer, () => usageRepairStage("openai-completions"));
  return (await t.fetch("https://p.example/v1", { method: "POST", body: "{}" })).text();
}

describe("a provider's event stream passes the byte bound and the usage repair in one pass", () => {
  it.each([1, 7, 64, 4096])("the same bytes as the repair as a separate stream (chunks of %i bytes)", async (size) => {
    const separate = await new Response(stream(chunks(SSE, size)).pipeThrough(usageRepair("openai-completions"))).text();
    const one = await fused(chunks(SSE, size));
    expect(one).toBe(separate);
    expect(one).toContain('"prompt_tokens":0');
    expect(one).toContain('lo \\"usage\\"');
  });

  it("an observer's tap still sees the provider's own bytes, and the caller the repaired ones", async () => {
    const seen: string[] = [];
    const out = await fused(chunks(SSE, 5), 200, { sseEvent: (d) => seen.push(d) });
    expect(seen[2]).toContain('"prompt_tokens":"12"');
    expect(out).toContain('"prompt_tokens":0');
  });

  it("an error answer is not rewritten", async () => {
    const body = 'data: {"usage":{"prompt_tokens":"12"}}\n\n';
    expect(await fused(chunks(body, 3), 500)).toBe(body);
  });

  it("a stream past the bound still errors", async () => {
    const line = encoder.encode(`data: ${JSON.stringify({ x: "a".repeat(60_000) })}\n\n`);
    const parts = Array.from({ length: Math.ceil(MAX_PROVIDER_RESPONSE_BYTES / line.length) + 2 }, () => line);
    await expect(fused(parts)).rejects.toThrow(/larger than/);
  });
});
