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
  /** The caller takes the answer whole (nothing shown as it streams): the body may be read in large pieces. */
  whole?: boolean;
};

/** What a reader of a whole answer asks for at once (workerd's `readAtLeast`); the byte bound is checked after each piece. */
const WHOLE_PIECE_BYTES = 64 * 1024;

type BodyReader = { read(): Promise<ReadableStreamReadResult<Uint8Array>>; cancel(): Promise<void> };

/**
 * The body's bytes as the provider flushed them (a read, and a JavaScript turn, per chunk: a streamed
 * answer is many small chunks), or, for a whole answer, in pieces of up to WHOLE_PIECE_BYTES
 * (workerd's `readAtLeast` on a byte reader waits for that much or the end): a short answer in one
 * read. A runtime without `readAtLeast` (Node) reads as flushed.
 */
function bodyReader(body: ReadableStream<Uint8Array>, whole: boolean): BodyReader {
  if (whole) {
    let byob: ReadableStreamBYOBReader | undefined;
    try {
      byob = body.getReader({ mode: "byob" });
    } catch {
      byob = undefined;
    }
    type AtLeast = (min: number, view: Uint8Array) => Promise<ReadableStreamReadResult<Uint8Array>>;
    const readAtLeast = (byob as { readAtLeast?: AtLeast } | undefined)?.readAtLeast;
    if (byob && typeof readAtLeast === "function") {
      const reader = byob;
      return { read: () => readAtLeast.call(reader, WHOLE_PIECE_BYTES, new Uint8Array(WHOLE_PIECE_BYTES)), cancel: () => reader.cancel() };
    }
    byob?.releaseLock();
  }
  return body.getReader();
}

/**
 * The `data` of the server-sent events of the body, in order, as the AI SDK's event parser gives
 * them (eventsource-parser), one batch per piece read that completed any (a reader then pays one
 * await per chunk or piece, not one per event): the body bounded at MAX_PROVIDER_RESPONSE_BYTES, each event
 * shown to the tap before the reader sees it. An event without its closing blank line is dropped,
 * as the SDK drops it. The body is cancelled when the reader stops early.
 */
export async function* sseEventBatches(ctx: LeanStreamContext): AsyncGenerator<string[]> {
  let events: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e.data) });
  const decoder = new TextDecoder();
  let seen = 0;
  const reader = bodyReader(ctx.body, ctx.whole === true);
  try {
    for (;;) {
      const next = await reader.read();
      // A piece read to the body's end may come with the end itself.
      const bytes = next.value;
      if (bytes !== undefined && bytes.byteLength > 0) {
        seen += bytes.byteLength;
        if (seen > MAX_PROVIDER_RESPONSE_BYTES) {
          ctx.onOverflow(MAX_PROVIDER_RESPONSE_BYTES);
          throw new RangeError(`the provider's answer is larger than ${MAX_PROVIDER_RESPONSE_BYTES} bytes`);
        }
        parser.feed(decoder.decode(bytes, { stream: true }));
      }
      if (events.length > 0) {
        const batch = events;
        events = [];
        if (ctx.onEvent) for (const data of batch) tap(ctx.onEvent, data);
        yield batch;
      }
      if (next.done) break;
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
