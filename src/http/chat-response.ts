import type { Context } from "hono";
import { sessionResetMessage } from "../errors";
import { readEvents, sseFrame, type ChatError, type ChatEvent } from "../agent";
import { httpStatus } from "./http-status";

/**
 * The HTTP face of one `/chat` call. The session object streams NDJSON events; with
 * `Accept: text/event-stream` each becomes a server-sent event, otherwise the answer is the
 * final event as JSON: `done` → 200 with the ChatAnswer, `error` → the error's status with
 * `{ error: { code, message, providerStatus?, retryAfterSeconds? }, turnId?, meta? }` (a provider
 * 429 keeps its Retry-After). A request refused before the loop starts (unknown turn, bad model)
 * is an HTTP error in both modes: SSE starts only once the turn runs.
 *
 * A quiet event stream gets a comment line (`: keep-alive`) every `heartbeatMs` (default 15 s):
 * proxies keep it open (Cloudflare's edge ends a response idle for 100 s, and a cell may wait
 * minutes for an approval), and a client that went away is noticed at the next write, which
 * cancels the stream and with it the turn's running work. SSE clients ignore comment lines.
 */
export const SSE_HEARTBEAT_MS = 15_000;
const HEARTBEAT_RANGE = { min: 100, max: 60_000 };
const HEARTBEAT = new TextEncoder().encode(": keep-alive\n\n");

export async function chatResponse(
  c: Context,
  stream: ReadableStream<Uint8Array>,
  hooks: { onError(code: string): void; onCancel(): void; heartbeatMs?: number },
): Promise<Response> {
  const onError = hooks.onError;
  // Fires once when the SSE client is gone: stops reading the session object's stream at once.
  const gone = new AbortController();
  const events = readEvents(stream, gone.signal);
  let turnId: string | undefined;
  // The session object's stream broke (the object was reset: CPU or memory limit, deploy): the
  // turn is kept and may be continued with { turnId }; never a 500 or a stream that just stops.
  const lost = (): Extract<ChatEvent, { type: "error" }> => ({
    type: "error",
    error: {
      code: "session_reset" as ChatError["code"],
      message: sessionResetMessage("during this call") + (turnId ? `; continue the turn with { "turnId": "${turnId}" }` : "; retry"),
    },
    ...(turnId ? { turnId } : {}),
  });
  const next = async (): Promise<IteratorResult<ChatEvent> | "lost"> => {
    try {
      const r = await events.next();
      if (!r.done && r.value.type === "turn") turnId = r.value.turnId;
      return r;
    } catch {
      return "lost";
    }
  };
  const first = await next();
  if (first === "lost") return fail(c, lost(), onError);
  if (first.done) return fail(c, { type: "error", error: { code: "internal_error", message: "the agent loop ended without an answer" } }, onError);
  if (first.value.type === "error") return fail(c, first.value, onError);
  if (!wantsSse(c.req.header("accept"))) {
    let last: ChatEvent = first.value;
    for (;;) {
      const r = await next();
      if (r === "lost") return fail(c, lost(), onError);
      if (r.done) break;
      last = r.value;
    }
    if (last.type === "done") return c.json(last.answer, 200);
    return fail(
      c,
      last.type === "error" ? last : { type: "error", error: { code: "internal_error", message: "the agent loop ended without an answer" } },
      onError,
    );
  }
  const encoder = new TextEncoder();
  const every = Math.min(HEARTBEAT_RANGE.max, Math.max(HEARTBEAT_RANGE.min, Math.floor(hooks.heartbeatMs ?? SSE_HEARTBEAT_MS)));
  let beat: number | null = null;
  let finished = false;
  // The client went away (the stream was cancelled, or a write to it failed): stop the heartbeat,
  // cancel the turn's active work (model call, running cell) and stop reading the session
  // object's stream, whose cancel cancels the turn too (a second path, should the first be lost).
  const depart = () => {
    clearInterval(beat);
    if (finished || gone.signal.aborted) return;
    gone.abort();
    hooks.onCancel();
  };
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      // A write that fails is a departed client: the runtime cancels the stream once it cannot
      // deliver to the client, and every later enqueue throws.
      const write = (bytes: Uint8Array): boolean => {
        if (gone.signal.aborted) return false;
        try {
          controller.enqueue(bytes);
          return true;
        } catch {
          depart();
          return false;
        }
      };
      write(encoder.encode(sseFrame(first.value)));
      beat = setInterval(() => write(HEARTBEAT), every);
      try {
        for (;;) {
          const r = await next();
          if (gone.signal.aborted) return;
          if (r === "lost") {
            write(encoder.encode(sseFrame(lost())));
            break;
          }
          if (r.done) break;
          if (!write(encoder.encode(sseFrame(r.value)))) return;
        }
        finished = true;
        controller.close();
      } finally {
        clearInterval(beat);
      }
    },
    cancel() {
      depart();
    },
  });
  return c.newResponse(body, 200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
}

export function wantsSse(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((part) => part.trim().toLowerCase().startsWith("text/event-stream"));
}

function fail(c: Context, event: Extract<ChatEvent, { type: "error" }>, onError: (code: string) => void): Response {
  onError(event.error.code);
  const { code, message, providerStatus, retryAfterSeconds } = event.error;
  const headers: Record<string, string> = retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : {};
  return c.json(
    {
      error: {
        code,
        message,
        ...(providerStatus !== undefined ? { providerStatus } : {}),
        ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      },
      ...(event.turnId !== undefined ? { turnId: event.turnId } : {}),
      ...(event.meta !== undefined ? { meta: event.meta } : {}),
    },
    httpStatus(code),
    headers,
  );
}
