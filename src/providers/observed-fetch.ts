import type { Clock } from "../runtime";
import type { TransportObserver } from "./types";

/** The fetch one model call goes through, and what it saw. */
export type ObservedFetch = {
  fetch: typeof fetch;
  /** UTF-8 bytes of the last request body sent (0 before any). */
  requestBytes(): number;
  /** Whether a request left (an error before it is a request the adapter could not build). */
  sent(): boolean;
  /** The answer's HTTP status once its headers came. */
  status(): number | undefined;
};

/**
 * Wraps the fetch a wire-format client uses, once per model call: counts the request body's bytes and
 * shows the observer the request (URL and parsed body: the API key travels in a header and is never
 * passed on), the response status and time to headers, and each server-sent event's `data:` text as
 * it streams through. The body is tapped in line, not teed, so a slow observer never buffers a stream.
 */
export function observedFetch(base: typeof fetch, clock: Clock, observer?: TransportObserver): ObservedFetch {
  let bytes = 0;
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
    const onEvent = observer?.sseEvent;
    if (onEvent === undefined || response.body === null || !isEventStream(response)) return response;
    return new Response(response.body.pipeThrough(sseDataTap(onEvent)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return { fetch: wrapped as typeof fetch, requestBytes: () => bytes, sent: () => sent, status: () => status };
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
