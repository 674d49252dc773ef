import type { ResolvedModel } from "./types";
import type { ChunkStage } from "./wire-usage";

/**
 * Joins consecutive argument deltas of one streamed tool call into one event before the wire
 * client parses them. Vendors stream a tool call's arguments a few characters per event (an `exec`
 * program of 800 characters is ~120 events), and the AI SDK parses, schema-checks and emits a part
 * for each: most of a code-mode model call's time in the isolate. Nothing downstream reads the
 * deltas (createModelClient takes each call whole, at its end), so joining them changes no result:
 * the wire client sees the same calls, text, usage and finish reason.
 *
 * Only an event of the exact continuation shape is joined (Chat Completions: one choice at index 0
 * whose delta is one `tool_calls` entry with an index and `function.arguments` and nothing else that
 * counts; Messages: `content_block_delta` with `input_json_delta`), and only with the held run of the
 * same call (tool index, or content block). The run is sent, as the first event with the joined
 * text, when any other event comes, at the end of the stream, or at MAX_JOINED_CHARS. Every other
 * event passes unchanged and in order; a run of one event passes as its own bytes. A Chat
 * Completions index that starts a second call is never joined (the SDK decides which call a delta
 * belongs to by how complete each is). A stream with carriage returns passes untouched.
 */

type ProviderApi = ResolvedModel["api"];

/** Argument text held per run at most (the byte cap before this stage bounds the stream anyway). */
export const MAX_JOINED_CHARS = 64 * 1024;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const absent = (v: unknown) => v === undefined || v === null;
const nullishOf = (v: unknown, type: "string" | "number") => absent(v) || typeof v === type;
const onlyKeys = (obj: Json, allowed: ReadonlySet<string>) => Object.keys(obj).every((k) => allowed.has(k));

/** A continuation: which call it continues, its text, and how to write the joined event. */
type Piece = { key: number; text: string; write(joined: string): string };

const CHUNK_KEYS = new Set(["id", "object", "created", "model", "system_fingerprint", "service_tier", "obfuscation", "usage", "choices"]);
const CHOICE_KEYS = new Set(["index", "delta", "logprobs", "finish_reason"]);
const DELTA_KEYS = new Set(["tool_calls", "role", "content", "refusal"]);
const CALL_KEYS = new Set(["index", "id", "type", "function"]);
const FUNCTION_KEYS = new Set(["arguments", "name"]);

/** A Chat Completions chunk that only adds argument text to the call at one tool index. */
function openAiPiece(chunk: Json): Piece | undefined {
  if (!onlyKeys(chunk, CHUNK_KEYS) || !absent(chunk.usage) || !Array.isArray(chunk.choices) || chunk.choices.length !== 1) return undefined;
  // The fields the wire client checks on every chunk: a joined event must fail where one of its parts would.
  if (!nullishOf(chunk.id, "string") || !nullishOf(chunk.model, "string") || !nullishOf(chunk.created, "number")) return undefined;
  const choice = chunk.choices[0];
  if (!isObject(choice) || !onlyKeys(choice, CHOICE_KEYS) || choice.index !== 0 || !absent(choice.logprobs) || !absent(choice.finish_reason))
    return undefined;
  const delta = choice.delta;
  if (!isObject(delta) || !onlyKeys(delta, DELTA_KEYS) || !absent(delta.content) || !absent(delta.refusal)) return undefined;
  if (!absent(delta.role) && delta.role !== "assistant") return undefined;
  if (!Array.isArray(delta.tool_calls) || delta.tool_calls.length !== 1) return undefined;
  const call = delta.tool_calls[0];
  if (!isObject(call) || !onlyKeys(call, CALL_KEYS) || !Number.isSafeInteger(call.index) || !absent(call.id)) return undefined;
  if (!absent(call.type) && call.type !== "function") return undefined;
  const fn = call.function;
  if (!isObject(fn) || !onlyKeys(fn, FUNCTION_KEYS) || !absent(fn.name) || typeof fn.arguments !== "string") return undefined;
  return {
    key: call.index as number,
    text: fn.arguments,
    write: (joined) => {
      fn.arguments = joined;
      return `data: ${JSON.stringify(chunk)}\n\n`;
    },
  };
}

/** A Messages `content_block_delta` carrying tool input JSON. */
function anthropicPiece(event: Json, named: boolean): Piece | undefined {
  if (event.type !== "content_block_delta" || !Number.isSafeInteger(event.index) || Object.keys(event).length !== 3) return undefined;
  const delta = event.delta;
  if (!isObject(delta) || delta.type !== "input_json_delta" || typeof delta.partial_json !== "string" || Object.keys(delta).length !== 2)
    return undefined;
  return {
    key: event.index as number,
    text: delta.partial_json,
    write: (joined) => {
      delta.partial_json = joined;
      return `${named ? "event: content_block_delta\n" : ""}data: ${JSON.stringify(event)}\n\n`;
    },
  };
}

/** Chat Completions tool indexes that began a call (a second start at an index turns joining off there). */
function noteStarts(chunk: Json, starts: Map<number, number>): void {
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  for (const choice of choices) {
    const calls = isObject(choice) && isObject(choice.delta) && Array.isArray(choice.delta.tool_calls) ? choice.delta.tool_calls : [];
    for (const call of calls) {
      if (!isObject(call) || typeof call.index !== "number") continue;
      const named = isObject(call.function) && typeof call.function.name === "string" && call.function.name.trim() !== "";
      const id = typeof call.id === "string" && call.id.trim() !== "";
      if (named || id) starts.set(call.index, (starts.get(call.index) ?? 0) + 1);
    }
  }
}

/*
 * The continuations vendors actually send, recognized by their exact text: one regular expression
 * test and a parse of the argument string instead of a parse of the whole chunk per delta. A text
 * these match is valid JSON (JSON's own string, number and literal grammar, fixed keys in a fixed
 * order, no whitespace) that the parsing path would take as the same piece: every condition it
 * checks holds by construction. Anything else, a key order, whitespace or field of another
 * vendor, goes the parsing path. The whole chunk is parsed only to write a joined event.
 */
const STR = String.raw`"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`;
const INT = String.raw`(?:0|[1-9]\d{0,14})`;
const OPENAI_CONTINUATION = new RegExp(
  String.raw`^\{"id":${STR},"object":"chat\.completion\.chunk","created":${INT},"model":${STR},(?:"service_tier":(?:${STR}|null),)?(?:"system_fingerprint":(?:${STR}|null),)?` +
    String.raw`"choices":\[\{"index":0,"delta":\{"tool_calls":\[\{"index":(${INT}),"function":\{"arguments":(${STR})\}\}\]\},"logprobs":null,"finish_reason":null\}\]` +
    String.raw`(?:,"usage":null)?(?:,"obfuscation":${STR})?\}$`,
);
const ANTHROPIC_CONTINUATION = new RegExp(
  String.raw`^\{"type":"content_block_delta","index":(${INT}),"delta":\{"type":"input_json_delta","partial_json":(${STR})\}\}$`,
);

/** A Chat Completions continuation recognized by its exact text: its tool index and argument text (no whole-chunk parse). */
export function openAiContinuationText(data: string): { index: number; text: string } | undefined {
  const m = OPENAI_CONTINUATION.exec(data);
  return m ? { index: Number(m[1]), text: JSON.parse(m[2]!) as string } : undefined;
}

function openAiContinuation(data: string): Piece | undefined {
  const m = OPENAI_CONTINUATION.exec(data);
  if (!m) return undefined;
  return {
    key: Number(m[1]),
    text: JSON.parse(m[2]!) as string,
    write: (joined) => {
      const chunk = JSON.parse(data) as { choices: [{ delta: { tool_calls: [{ function: { arguments: string } }] } }] };
      chunk.choices[0].delta.tool_calls[0].function.arguments = joined;
      return `data: ${JSON.stringify(chunk)}\n\n`;
    },
  };
}

function anthropicContinuation(data: string, named: boolean): Piece | undefined {
  const m = ANTHROPIC_CONTINUATION.exec(data);
  if (!m) return undefined;
  return {
    key: Number(m[1]),
    text: JSON.parse(m[2]!) as string,
    write: (joined) => {
      const event = JSON.parse(data) as { delta: { partial_json: string } };
      event.delta.partial_json = joined;
      return `${named ? "event: content_block_delta\n" : ""}data: ${JSON.stringify(event)}\n\n`;
    },
  };
}

/** The continuation an event (its text without the blank line that ends it) is, if it is one. */
function pieceOf(api: ProviderApi, event: string, starts: Map<number, number>): Piece | undefined {
  // Cheap test first: most events carry no argument text.
  if (api === "openai-completions" ? !event.includes('"tool_calls"') : !event.includes('"input_json_delta"')) return undefined;
  let named = false;
  let data: string | undefined;
  for (const line of event.split("\n")) {
    if (line === "event: content_block_delta" && api === "anthropic-messages" && !named) named = true;
    else if (line.startsWith("data: ") && data === undefined) data = line.slice(6);
    else return undefined; // comments, ids, retry hints, multi-line data: passed as they are
  }
  if (data === undefined) return undefined;
  const fast = api === "anthropic-messages" ? anthropicContinuation(data, named) : openAiContinuation(data);
  if (fast !== undefined) return api === "anthropic-messages" || starts.get(fast.key) === 1 ? fast : undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  if (api === "anthropic-messages") return anthropicPiece(parsed, named);
  const piece = openAiPiece(parsed);
  if (piece === undefined) noteStarts(parsed, starts);
  return piece !== undefined && starts.get(piece.key) === 1 ? piece : undefined;
}

/** The coalescing as one pass over an event stream's chunks (chained after the usage repair). */
export function toolArgumentCoalescing(api: ProviderApi): ChunkStage {
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  const encoder = new TextEncoder();
  const starts = new Map<number, number>();
  let pending = "";
  let passThrough = false;
  let held: { first: Piece; raw: string; parts: string[]; chars: number } | undefined;
  const release = (out: string[]) => {
    if (held === undefined) return;
    out.push(held.parts.length === 1 ? held.raw : held.first.write(held.parts.join("")));
    held = undefined;
  };
  const take = (event: string, out: string[]) => {
    const piece = pieceOf(api, event, starts);
    if (piece !== undefined && held !== undefined && held.first.key === piece.key && held.chars + piece.text.length <= MAX_JOINED_CHARS) {
      held.parts.push(piece.text);
      held.chars += piece.text.length;
      return;
    }
    release(out);
    if (piece !== undefined) held = { first: piece, raw: `${event}\n\n`, parts: [piece.text], chars: piece.text.length };
    else out.push(`${event}\n\n`);
  };
  return {
    transform(chunk, enqueue) {
      if (passThrough) return enqueue(chunk);
      pending += decoder.decode(chunk, { stream: true });
      if (pending.includes("\r")) {
        // Lines may end in CRLF or CR: not parsed here, everything passes as it came.
        passThrough = true;
        const out: string[] = [];
        release(out);
        out.push(pending);
        pending = "";
        return enqueue(encoder.encode(out.join("")));
      }
      const end = pending.lastIndexOf("\n\n");
      if (end === -1) return;
      const events = pending.slice(0, end).split("\n\n");
      pending = pending.slice(end + 2);
      const out: string[] = [];
      for (const event of events) take(event, out);
      if (out.length > 0) enqueue(encoder.encode(out.join("")));
    },
    flush(enqueue) {
      if (passThrough) return;
      pending += decoder.decode();
      const out: string[] = [];
      release(out);
      if (pending !== "") out.push(pending);
      if (out.length > 0) enqueue(encoder.encode(out.join("")));
    },
  };
}

/** Two stages in one pass: each chunk `first` lets out goes through `second`. */
export function chainStages(first: ChunkStage, second: ChunkStage): ChunkStage {
  return {
    transform: (chunk, enqueue) => first.transform(chunk, (out) => second.transform(out, enqueue)),
    flush: (enqueue) => {
      first.flush((out) => second.transform(out, enqueue));
      second.flush(enqueue);
    },
  };
}
