import { createParser } from "eventsource-parser";
import { MAX_PROVIDER_RESPONSE_BYTES } from "../limits";

/** A successful event-stream answer a lean reader takes over from the wire client (observed-fetch.ts `claim`). */
export type LeanStreamContext = {
  body: ReadableStream<Uint8Array>;
  headers: Record<string, string>;
  url: string;
  /** The observer's per-event tap (its failure never breaks the call). */
  onEvent?: (data: string) => void;
  /** Told when the body ran past the byte bound (the call then fails naming it). */
  onOverflow: (limit: number) => void;
};

/**
 * The `data` of the server-sent events of the body, in order, as the AI SDK's event parser gives
 * them (eventsource-parser), one batch per network chunk that completed any (a reader then pays one
 * await per chunk, not one per event): the body bounded at MAX_PROVIDER_RESPONSE_BYTES, each event
 * shown to the tap before the reader sees it. An event without its closing blank line is dropped,
 * as the SDK drops it. The body is cancelled when the reader stops early.
 */
export async function* sseEventBatches(ctx: LeanStreamContext): AsyncGenerator<string[]> {
  let events: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e.data) });
  const decoder = new TextDecoder();
  let seen = 0;
  const reader = ctx.body.getReader();
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      seen += next.value.byteLength;
      if (seen > MAX_PROVIDER_RESPONSE_BYTES) {
        ctx.onOverflow(MAX_PROVIDER_RESPONSE_BYTES);
        throw new RangeError(`the provider's answer is larger than ${MAX_PROVIDER_RESPONSE_BYTES} bytes`);
      }
      parser.feed(decoder.decode(next.value, { stream: true }));
      if (events.length === 0) continue;
      const batch = events;
      events = [];
      if (ctx.onEvent) for (const data of batch) tap(ctx.onEvent, data);
      yield batch;
    }
    const rest = decoder.decode();
    if (rest !== "") parser.feed(rest);
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * The body's events through `handle` (which pushes the parts each gives to `out`), yielding those
 * parts a batch per network chunk; false once `handle` refused an event (its parts are yielded
 * first, nothing after it is read), true at the body's end.
 */
export async function* handledBatches<P>(
  ctx: LeanStreamContext,
  out: P[],
  handle: (data: string) => boolean | Promise<boolean>,
): AsyncGenerator<P[], boolean> {
  for await (const batch of sseEventBatches(ctx)) {
    let ok = true;
    for (const data of batch) {
      const handled = handle(data);
      // Only an event naming a prototype key waits (for the SDK's secure parse).
      ok = typeof handled === "boolean" ? handled : await handled;
      if (!ok) break;
    }
    if (out.length > 0) yield out.splice(0);
    if (!ok) return false;
  }
  return true;
}

function tap(onEvent: (data: string) => void, data: string): void {
  try {
    onEvent(data);
  } catch {
    // An observer is a debug aid: its failure must not break the call it watches.
  }
}
