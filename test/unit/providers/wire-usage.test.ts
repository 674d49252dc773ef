import { describe, expect, it } from "vitest";
import { MAX_TOKEN_COUNT } from "../../../src/limits";
import { repairUsageData, usageRepair } from "../../../src/providers/wire-usage";

async function through(api: "openai-completions" | "anthropic-messages", parts: string[]): Promise<string> {
  const encoder = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(encoder.encode(p));
      c.close();
    },
  });
  return new Response(source.pipeThrough(usageRepair(api))).text();
}

describe("usage repair before the wire client parses a chunk", () => {
  it("chunks without usage, and well-formed usage, pass through unchanged (the same text)", () => {
    const delta = '{"choices":[{"index":0,"delta":{"content":"hi \\"usage\\""}}]}';
    expect(repairUsageData("openai-completions", delta)).toBe(delta);
    const good = '{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":1}}}';
    expect(repairUsageData("openai-completions", good)).toBe(good);
    const start = '{"type":"message_start","message":{"usage":{"input_tokens":3,"service_tier":"standard"}}}';
    expect(repairUsageData("anthropic-messages", start)).toBe(start);
    expect(repairUsageData("openai-completions", '{"usage": not json')).toBe('{"usage": not json');
  });

  it("each count becomes a count; parts of the wrong shape are dropped, required counts filled", () => {
    const openai = JSON.parse(
      repairUsageData(
        "openai-completions",
        '{"usage":{"prompt_tokens":"12","completion_tokens":1e400,"total_tokens":-1,"prompt_tokens_details":"x"}}',
      ),
    );
    expect(openai.usage).toEqual({ prompt_tokens: 0, completion_tokens: MAX_TOKEN_COUNT, total_tokens: 0, prompt_tokens_details: null });
    expect(JSON.parse(repairUsageData("openai-completions", '{"choices":[],"usage":[1]}')).usage).toBeNull();
    const start = JSON.parse(repairUsageData("anthropic-messages", '{"type":"message_start","message":{"usage":"lots"}}'));
    expect(start.message.usage).toEqual({ input_tokens: 0 });
    const delta = JSON.parse(
      repairUsageData(
        "anthropic-messages",
        '{"type":"message_delta","usage":{"output_tokens":{},"iterations":[{"type":"message","input_tokens":"1","output_tokens":2}]}}',
      ),
    );
    expect(delta.usage).toEqual({ output_tokens: 0, iterations: [{ type: "message", input_tokens: 0, output_tokens: 2 }] });
    const bogus = JSON.parse(
      repairUsageData("anthropic-messages", '{"type":"message_delta","usage":{"output_tokens":1,"iterations":[{"type":"x"}]}}'),
    );
    expect(bogus.usage.iterations).toBeNull();
  });

  it("the stream transform rewrites only the data lines it repairs, across chunk boundaries and CRLF", async () => {
    const text =
      'data: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\ndata: {"choices":[],"usage":{"prompt_tokens":"9"}}\r\n\r\ndata: [DONE]\r\n\r\n';
    const out = await through("openai-completions", [text.slice(0, 30), text.slice(30, 61), text.slice(61)]);
    expect(out).toBe(text.replace('{"choices":[],"usage":{"prompt_tokens":"9"}}', '{"choices":[],"usage":{"prompt_tokens":0}}'));
    const anthropic =
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":"3"}}\n\nevent: message_stop\ndata: {"type":"message_stop"}';
    expect(await through("anthropic-messages", [anthropic])).toBe(anthropic.replace('"output_tokens":"3"', '"output_tokens":0'));
  });
});

describe("usage repair passes what needs no repair as it came", () => {
  it('a chunk of whole lines without repair is the same bytes; `"usage":null` chunks need none', async () => {
    const chunk = new TextEncoder().encode('data: {"choices":[{"delta":{"content":"hé"}}],"usage":null}\n\n');
    const seen: Uint8Array[] = [];
    const source = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(chunk);
        c.close();
      },
    });
    const reader = source.pipeThrough(usageRepair("openai-completions")).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) seen.push(r.value);
    expect(seen).toEqual([chunk]);
    expect(seen[0]).toBe(chunk);
    const nulls = '{"choices":[],"usage":null,"x":{"usage":null}}';
    expect(repairUsageData("openai-completions", nulls)).toBe(nulls);
    // Not every `"usage"` is null: parsed and repaired as before.
    expect(JSON.parse(repairUsageData("openai-completions", '{"usage":null,"usage":{"prompt_tokens":"1"}}')).usage).toEqual({ prompt_tokens: 0 });
    // Messages' required counts are still filled for a null usage.
    expect(JSON.parse(repairUsageData("anthropic-messages", '{"type":"message_delta","usage":null}')).usage).toEqual({ output_tokens: 0 });
  });

  it("a character split across chunks, a partial line and a leading byte order mark come out as the decoded text", async () => {
    const bytes = new TextEncoder().encode('data: {"choices":[{"delta":{"content":"€"}}]}\n\ndata: [DONE]\n\n');
    const cut = bytes.indexOf(0xe2) + 1;
    const parts = [bytes.slice(0, cut), bytes.slice(cut, cut + 3), bytes.slice(cut + 3)];
    const source = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array([0xef, 0xbb, 0xbf, 0x0a]));
        for (const p of parts) c.enqueue(p);
        c.close();
      },
    });
    const out = await new Response(source.pipeThrough(usageRepair("openai-completions"))).text();
    expect(out).toBe('\ndata: {"choices":[{"delta":{"content":"€"}}]}\n\ndata: [DONE]\n\n');
  });
});
