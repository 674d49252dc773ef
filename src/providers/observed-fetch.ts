import { MAX_PROVIDER_ERROR_BODY_BYTES, MAX_PROVIDER_RESPONSE_BYTES } from "../limits";
import type { Clock } from "../runtime";
import type { TransportObserver } from "./types";
import type { ChunkStage } from "./wire-usage";

/** The fetch one model call goes through, and what it saw. */
export type ObservedFetch = {
  fetch: typeof fetch;
  /** UTF-8 bytes of the last request body sent (0 before any). */
  requestBytes(): number;
  /** Whether a request left (an error before it is a request the adapter could not build). */
  sent(): boolean;
  /** The answer's HTTP status once its headers came. */
  status(): number | undefined;
  /** The byte bound the answer's body ran past (the body was cut there), if it did. */
  overflowed(): number | undefined;
  /** A successful event stream taken over (`claim`): its body, headers and URL; the wire client got an empty body. */
  claimed(): ClaimedStream | undefined;
  /** The claimed body's reader ran past this bound. */
  overflow(limit: number): void;
};

export type ClaimedStream = { body: ReadableStream<Uint8Array>; headers: Record<string, string>; url: string };

/**
 * Wraps the fetch a wire-format client uses, once per model call: counts the request body's bytes and
 * shows the observer the request (URL and parsed body: the API key travels in a header and is never
 * passed on), the response status and time to headers, and each server-sent event's `data:` text as
 * it streams through. The body is tapped in line, not teed, so a slow observer never buffers a stream.
 *
 * BOUND: the wire client reads an error answer whole and accumulates a stream's text, so a provider
 * could grow the session object's memory without limit. An error answer (status 400 or more) is
 * cut at MAX_PROVIDER_ERROR_BODY_BYTES; any other body past MAX_PROVIDER_RESPONSE_BYTES errors, and
 * the call fails as `provider_unavailable` naming the bound (`overflowed`).
 *
 * `eventStage`: what rewrites a successful event stream's bytes (the wire client's usage repair),
 * run in the same pass over each chunk as the bound (after it, and after the observer's tap).
 * `claim`: a successful event stream is not handed to the wire client (it gets an empty body) but
 * kept for the caller (`claimed()`), who reads, bounds and taps it itself.
 */
export function observedFetch(
  base: typeof fetch,
  clock: Clock,
  observer?: TransportObserver,
  eventStage?: () => ChunkStage,
  claim = false,
): ObservedFetch {
  let bytes = 0;
  let claimed: ClaimedStream | undefined;
  let sent = false;
  let status: number | undefined;
  const wrapped = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const text = typeof init?.body === "string" ? init.body : "";
    bytes = new TextEncoder().encode(text).byteLength;
    sent = true;
    observer?.request?.({ url, body: parseOrText(text), bytes });
    const started = clock.now();
    const response = await base(input, init);
    status = response.status;
    observer?.response?.({ url, status: response.status, ms: clock.now() - started });
    if (response.body === null) return response;
    // An error answer is cut short (its status still decides; its text is only shown, bounded);
    // a success cut short would be silently incomplete, so it fails instead.
    const onEvent = observer?.sseEvent;
    const events = isEventStream(response);
    if (claim && events && response.status < 400) {
      // The caller reads this body itself (lean-chat-stream.ts, which bounds it); the wire client parses nothing.
      claimed = { body: response.body, headers: Object.fromEntries(response.headers), url };
      return new Response("", { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    const stage = response.status < 400 && events ? eventStage?.() : undefined;
    const tapped = onEvent !== undefined && events;
    let body =
      response.status >= 400
        ? response.body.pipeThrough(byteCap(MAX_PROVIDER_ERROR_BODY_BYTES, "truncate"))
        : response.body.pipeThrough(
            // One pass over each chunk for the bound and the rewrite, unless an observer taps between them.
            byteCap(MAX_PROVIDER_RESPONSE_BYTES, "fail", () => (overflowed = MAX_PROVIDER_RESPONSE_BYTES), tapped ? undefined : stage),
          );
    if (tapped) body = body.pipeThrough(sseDataTap(onEvent));
    if (tapped && stage) body = body.pipeThrough(stageStream(stage));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  let overflowed: number | undefined;
  return {
    fetch: wrapped as typeof fetch,
    requestBytes: () => bytes,
    sent: () => sent,
    status: () => status,
    overflowed: () => overflowed,
    claimed: () => claimed,
    overflow: (limit) => (overflowed = limit),
  };
}

/**
 * Passes at most `limit` bytes, through `next` if given; past that the stream ends ("truncate") or
 * errors ("fail", and `onOverflow` is told).
 */
function byteCap(limit: number, past: "truncate" | "fail", onOverflow?: () => void, next?: ChunkStage): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  let done = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (done) return;
      const pass = (c: Uint8Array) => (next ? next.transform(c, (out) => controller.enqueue(out)) : controller.enqueue(c));
      const room = limit - seen;
      seen += chunk.byteLength;
      if (chunk.byteLength <= room) {
        pass(chunk);
        return;
      }
      done = true;
      if (past === "truncate") {
        if (room > 0) pass(chunk.subarray(0, room));
        controller.terminate();
        return;
      }
      onOverflow?.();
      controller.error(new RangeError(`the provider's answer is larger than ${limit} bytes`));
    },
    flush(controller) {
      next?.flush((out) => controller.enqueue(out));
    },
  });
}

function stageStream(stage: ChunkStage): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    transform: (chunk, controller) => stage.transform(chunk, (out) => controller.enqueue(out)),
    flush: (controller) => stage.flush((out) => controller.enqueue(out)),
  });
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream");
}

/**
 * Passes bytes through unchanged and reports each event's data (its `data:` lines joined by "\n",
 * as the EventSource spec assembles them) when the blank line that ends the event arrives.
 */
export function sseDataTap(onEvent: (data: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let pending = "";
  let data: string[] = [];
  const line = (raw: string) => {
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (text === "") {
      if (data.length > 0) emit();
      return;
    }
    if (text === "data" || text.startsWith("data:")) {
      const value = text.slice(5);
      data.push(value.startsWith(" ") ? value.slice(1) : value);
    }
  };
  const emit = () => {
    const event = data.join("\n");
    data = [];
    try {
      onEvent(event);
    } catch {
      // An observer is a debug aid: its failure must not break the call it watches.
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      pending += decoder.decode(chunk, { stream: true });
      let newline = pending.indexOf("\n");
      while (newline !== -1) {
        line(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf("\n");
      }
    },
    flush() {
      pending += decoder.decode();
      if (pending !== "") line(pending);
      if (data.length > 0) emit();
    },
  });
}
