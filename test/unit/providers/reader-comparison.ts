import { afterEach, expect } from "vitest";
import { createModelClient, LEAN_READER } from "../../../src/providers/create-model-client";
import { ProviderError, type ModelEvent, type ResolvedModel } from "../../../src/providers";

/**
 * What the lean-reader tests compare: one model call of `api` answered with `parts` (a streamed
 * answer, 200, event-stream), read by the lean reader or by the AI SDK's pipeline (the reference),
 * as the events it gave, the debug tap's events, and the failure it ended with.
 */
export type Outcome = {
  events: ModelEvent[];
  seen: string[];
  error?: { code: string; message: string; status: number; retryAfterSeconds?: number };
};

export const modelFor = (api: ResolvedModel["api"]): ResolvedModel => ({
  ref: "p/m",
  provider: "p",
  id: "m",
  wireModel: "m",
  api,
  baseUrl: "https://p.example/v1",
  apiKey: "sk-test-0123456789abcdef",
  contextWindow: 100_000,
});

const answering = (parts: Uint8Array[], headers: Record<string, string> = {}) =>
  (async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const p of parts) c.enqueue(p);
          c.close();
        },
      }),
      { status: 200, headers: { "content-type": "text/event-stream", ...headers } },
    )) as unknown as typeof fetch;

export async function readWith(lean: boolean, model: ResolvedModel, parts: Uint8Array[], headers?: Record<string, string>): Promise<Outcome> {
  LEAN_READER.enabled = lean;
  const seen: string[] = [];
  const client = createModelClient(model, { timeoutMs: 10_000, fetch: answering(parts, headers), observer: { sseEvent: (d) => seen.push(d) } });
  const events: ModelEvent[] = [];
  try {
    for await (const e of client.stream({
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "exec", description: "run", parameters: { type: "object", properties: { code: { type: "string" } } } }],
      signal: new AbortController().signal,
    }))
      events.push(e);
    return { events, seen };
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    const { code, message, status, retryAfterSeconds } = error;
    return { events, seen, error: { code, message, status, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) } };
  }
}

/** The lean reader is on again after each test (the module default). */
export function restoreLeanReader(): void {
  afterEach(() => {
    LEAN_READER.enabled = true;
  });
}

/**
 * Both readers on `text`, whole and cut a byte at a time: the same events and failure. The debug tap
 * sees the events read; the SDK's pipeline read ahead of a failure (and showed a last event without
 * its blank line, which it then ignored), so the lean tap shows a prefix of the SDK's.
 */
export async function expectSameReading(model: ResolvedModel, text: string, headers?: Record<string, string>): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  for (const parts of [[bytes], Array.from(bytes, (b) => new Uint8Array([b]))]) {
    const { seen: sdkSeen, ...sdk } = await readWith(false, model, parts, headers);
    const { seen, ...lean } = await readWith(true, model, parts, headers);
    expect(lean).toEqual(sdk);
    expect(sdkSeen.slice(0, seen.length)).toEqual(seen);
    if (sdk.error === undefined && text.endsWith("\n")) expect(seen).toEqual(sdkSeen);
  }
}
