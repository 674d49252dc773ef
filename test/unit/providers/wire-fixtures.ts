/** Provider answers the lean request and reader tests share: both wires' server-sent events, built small. */

/** Chat Completions events: each value a `data:` line (a string as is, so `[DONE]` and broken JSON pass through). */
export const chatSse = (...data: unknown[]): string => data.map((d) => `data: ${typeof d === "string" ? d : JSON.stringify(d)}\n\n`).join("");

/** One Chat Completions chunk with one choice. */
export const chatChunk = (delta: unknown, finish: string | null = null) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A whole "ok" answer, without the `[DONE]` line. */
export const CHAT_OK = [chatChunk({ role: "assistant", content: "ok" }), chatChunk({}, "stop")];

/** Messages events, each named after its type. */
export const messagesSse = (...data: Array<Record<string, unknown>>): string =>
  data.map((d) => `event: ${d.type}\ndata: ${JSON.stringify(d)}\n\n`).join("");

export const MESSAGES_START = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "m",
    content: [],
    stop_reason: null,
    usage: { input_tokens: 5, output_tokens: 1 },
  },
};

/** A whole "ok" Messages answer. */
export const MESSAGES_OK = [
  MESSAGES_START,
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } },
  { type: "message_stop" },
];

/** A fetch answer: `body` as a 200 event stream. */
export const streamed = (body: string) => async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
