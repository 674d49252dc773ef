import type { ChatEvent } from "../public";

/**
 * The events of a `/chat` answer with `Accept: text/event-stream`, in order. Each server-sent
 * event carries one `ChatEvent` as its JSON data (its `type` is also the SSE event name); comment
 * lines (`: keep-alive` heartbeats) carry none. Stopping early (`break`, `return()`) cancels the
 * body, and the gateway then cancels the turn's running work.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ChatEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // Event blocks end with a blank line (LF or CRLF line ends).
      buffered = buffered.replace(/\r\n?/g, "\n");
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = parseBlock(buffered.slice(0, end));
        buffered = buffered.slice(end + 2);
        if (event) yield event;
      }
      if (done) break;
    }
    finished = true;
    const last = parseBlock(buffered);
    if (last) yield last;
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** One event block: its `data:` lines joined (the gateway sends one); none (a comment): undefined. */
function parseBlock(block: string): ChatEvent | undefined {
  const data = block
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
  if (data.length === 0) return undefined;
  try {
    return JSON.parse(data.join("\n")) as ChatEvent;
  } catch {
    // Not the gateway's event (a proxy rewrote the stream): reported as the stream's failure, not thrown.
    return { type: "error", error: { code: "internal_error", message: `malformed event data: ${data.join("\n").slice(0, 200)}` } };
  }
}
