import { MAX_TOKEN_COUNT } from "../limits";
import { tokenCount } from "./token-count";
import type { ResolvedModel } from "./types";

/**
 * Token usage as the wire client can read it. The AI SDK validates each streamed chunk against
 * its schema: a count sent as a string, an object, `null` where one is required, or a number past
 * double range (`1e400`, which parses as Infinity) fails the whole chunk, and with it the turn.
 * Usage is bookkeeping, never content, so before the wire client parses a chunk each count of its
 * usage is made a count here: what `tokenCount` makes of it (not a count: 0; past 2^53−1:
 * clamped, Infinity included), and a usage part of the wrong shape is dropped (`null`) or, where
 * the wire format requires it, filled with zeros. Chunks without usage, and usage that is already
 * well formed, pass through byte for byte.
 */

type Api = ResolvedModel["api"];
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A count as the wire client may read it (a JSON number literal past double range is a huge count). */
function wireCount(value: unknown): number {
  return value === Number.POSITIVE_INFINITY ? MAX_TOKEN_COUNT : tokenCount(value);
}

/** Repairs `obj[key]` when it is present (or `required`); true when it changed. */
function repairCount(obj: Json, key: string, required = false): boolean {
  if (!(key in obj) || obj[key] === null || obj[key] === undefined) {
    if (!required) return false;
    obj[key] = 0;
    return true;
  }
  const count = wireCount(obj[key]);
  if (count === obj[key]) return false;
  obj[key] = count;
  return true;
}

/** An optional object part of usage (`prompt_tokens_details`…): dropped when not an object, its counts repaired. */
function repairPart(obj: Json, key: string, counts: readonly string[]): boolean {
  const part = obj[key];
  if (part === undefined || part === null) return false;
  if (!isObject(part)) {
    obj[key] = null;
    return true;
  }
  let changed = false;
  for (const c of counts) changed = repairCount(part, c) || changed;
  return changed;
}

const OPENAI_COUNTS = ["prompt_tokens", "completion_tokens", "total_tokens"];
const OPENAI_PARTS: Array<[string, string[]]> = [
  ["prompt_tokens_details", ["cached_tokens", "cache_write_tokens"]],
  ["completion_tokens_details", ["reasoning_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"]],
];
const ANTHROPIC_COUNTS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"];
const ITERATION_TYPES = new Set(["compaction", "message", "advisor_message", "fallback_message"]);

/** A Chat Completions chunk's `usage` (optional as a whole). */
function repairOpenAiUsage(chunk: Json): boolean {
  if (!("usage" in chunk) || chunk.usage === null || chunk.usage === undefined) return false;
  if (!isObject(chunk.usage)) {
    chunk.usage = null;
    return true;
  }
  const usage = chunk.usage;
  let changed = false;
  for (const key of OPENAI_COUNTS) changed = repairCount(usage, key) || changed;
  for (const [key, counts] of OPENAI_PARTS) changed = repairPart(usage, key, counts) || changed;
  return changed;
}

/** A Messages event's usage: `message_start` requires `input_tokens`, `message_delta` requires `output_tokens`. */
function repairAnthropicUsage(holder: Json, required: string): boolean {
  let changed = false;
  if (!isObject(holder.usage)) {
    holder.usage = {};
    changed = true;
  }
  const usage = holder.usage as Json;
  for (const key of ANTHROPIC_COUNTS) changed = repairCount(usage, key, key === required) || changed;
  if (usage.service_tier !== undefined && usage.service_tier !== null && typeof usage.service_tier !== "string") {
    usage.service_tier = null;
    changed = true;
  }
  changed = repairPart(usage, "output_tokens_details", ["thinking_tokens"]) || changed;
  const iterations = usage.iterations;
  if (iterations !== undefined && iterations !== null) {
    // Per-iteration counts are summed by the wire client: a list it cannot read is dropped whole.
    if (!Array.isArray(iterations) || !iterations.every((it) => isObject(it) && ITERATION_TYPES.has(it.type as string))) {
      usage.iterations = null;
      changed = true;
    } else {
      for (const it of iterations as Json[]) {
        if (it.model !== undefined && it.model !== null && typeof it.model !== "string") {
          it.model = null;
          changed = true;
        }
        for (const key of ANTHROPIC_COUNTS) changed = repairCount(it, key, key === "input_tokens" || key === "output_tokens") || changed;
      }
    }
  }
  return changed;
}

/** One server-sent event's data: the same text, or the JSON again with its usage repaired. */
export function repairUsageData(api: Api, data: string): string {
  // Cheap tests first: most chunks are text deltas without usage, or (Chat Completions with
  // `include_usage`) with `"usage":null` until the last one, which needs no repair.
  if (!data.includes('"usage"')) return data;
  if (api === "openai-completions" && onlyNullUsage(data)) return data;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return data; // not JSON: the wire client reports the broken stream
  }
  if (!isObject(parsed)) return data;
  return repairUsageValue(api, parsed) ? JSON.stringify(parsed) : data;
}

/** `repairUsageData` on an event already parsed (in place); true when it changed. */
export function repairUsageValue(api: Api, parsed: Json): boolean {
  if (api === "openai-completions") return repairOpenAiUsage(parsed);
  if (parsed.type === "message_start" && isObject(parsed.message)) return repairAnthropicUsage(parsed.message, "input_tokens");
  if (parsed.type === "message_delta") return repairAnthropicUsage(parsed, "output_tokens");
  return false;
}

const USAGE_KEY = '"usage"';

/**
 * Whether every `"usage"` token of a JSON text is `"usage":null` (a quote inside a JSON string is
 * escaped, so each such token is structure): the top-level usage is then null or absent.
 */
function onlyNullUsage(data: string): boolean {
  for (let i = data.indexOf(USAGE_KEY); i !== -1; i = data.indexOf(USAGE_KEY, i + USAGE_KEY.length))
    if (!data.startsWith(":null", i + USAGE_KEY.length)) return false;
  return true;
}

/** One pass over a byte stream's chunks, to be run inside another stream's pass (see observed-fetch.ts). */
export type ChunkStage = {
  transform(chunk: Uint8Array, enqueue: (chunk: Uint8Array) => void): void;
  flush(enqueue: (chunk: Uint8Array) => void): void;
};

/**
 * Rewrites the `data:` lines of an event stream through `repairUsageData`; every other line passes
 * unchanged. A chunk of whole lines that needs no repair (nearly all of them) passes as the same
 * bytes, without being encoded again.
 */
export function usageRepairStage(api: Api): ChunkStage {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  // The previous chunk ended with a newline byte: nothing is held (no partial line, no partial
  // character). Not at the start of a stream opening with a byte order mark (the decoder drops it).
  let atLineStart = true;
  let first = true;
  const line = (raw: string): string => {
    const cr = raw.endsWith("\r") ? "\r" : "";
    const text = cr ? raw.slice(0, -1) : raw;
    if (!text.startsWith("data:")) return raw;
    const value = text.slice(5);
    const data = value.startsWith(" ") ? value.slice(1) : value;
    const repaired = repairUsageData(api, data);
    return repaired === data ? raw : `data: ${repaired}${cr}`;
  };
  return {
    transform(chunk, enqueue) {
      const bom = first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
      if (chunk.byteLength > 0) first = false;
      const whole = atLineStart && !bom && chunk.byteLength > 0 && chunk[chunk.byteLength - 1] === 0x0a;
      atLineStart = chunk.byteLength > 0 ? chunk[chunk.byteLength - 1] === 0x0a : atLineStart;
      pending += decoder.decode(chunk, { stream: true });
      const end = pending.lastIndexOf("\n");
      if (end === -1) return;
      const lines = pending.slice(0, end).split("\n");
      pending = pending.slice(end + 1);
      const repaired = lines.map(line);
      if (whole && repaired.every((r, i) => r === lines[i])) enqueue(chunk);
      else enqueue(encoder.encode(repaired.join("\n") + "\n"));
    },
    flush(enqueue) {
      pending += decoder.decode();
      if (pending !== "") enqueue(encoder.encode(line(pending)));
    },
  };
}

/** `usageRepairStage` as a stream of its own. */
export function usageRepair(api: Api): TransformStream<Uint8Array, Uint8Array> {
  const stage = usageRepairStage(api);
  return new TransformStream({
    transform: (chunk, controller) => stage.transform(chunk, (c) => controller.enqueue(c)),
    flush: (controller) => stage.flush((c) => controller.enqueue(c)),
  });
}
