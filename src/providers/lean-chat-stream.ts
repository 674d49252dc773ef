import { APICallError, JSONParseError, TypeValidationError, type LanguageModelV4StreamPart, type LanguageModelV4Usage } from "@ai-sdk/provider";
import { StreamingToolCallTracker, generateId, safeParseJSON } from "@ai-sdk/provider-utils";
import { repairUsageValue } from "./wire-usage";
import { handledBatches, type LeanStreamContext } from "./lean-sse";
import { openAiContinuationText } from "./tool-argument-coalescing";

/**
 * A Chat Completions event stream read in one loop (issue 22, "a thin turn"), instead
 * of the byte cap, usage-repair and coalescing TransformStreams, then the AI SDK's decoder, event
 * parser, JSON/zod and parts streams (and its tee looking for an early error). It yields the parts
 * the SDK's `doStream` would (text deltas, tool calls, error, finish) so createModelClient's loop is
 * unchanged. What it keeps from the SDK: the request (doStream still builds and sends it), the SSE
 * grammar (eventsource-parser's own parser), the tool-call correlation (StreamingToolCallTracker),
 * and its error classes, so toProviderError maps every failure as before. What it re-does: the
 * chunk schema (openaiChatChunkSchema, checked by hand below) and the stream's bookkeeping.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const nullish = (v: unknown) => v === undefined || v === null;
const num = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const optStr = (v: unknown) => nullish(v) || typeof v === "string";
const optNum = (v: unknown) => nullish(v) || num(v);
const arrayOf = (v: unknown, each: (x: unknown) => boolean) => Array.isArray(v) && v.every(each);

/**
 * The Chat Completions stream of one call as the SDK's parts (only those createModelClient reads),
 * in one batch per network chunk that produced any.
 */
export async function* leanChatCompletionsParts(ctx: LeanStreamContext): AsyncGenerator<LanguageModelV4StreamPart[]> {
  const out: LanguageModelV4StreamPart[] = [];
  const tracker = new StreamingToolCallTracker({ enqueue: (part: LanguageModelV4StreamPart) => out.push(part) } as never, {
    generateId,
    typeValidation: "if-present",
  });
  let rawUsage: Json | undefined;
  let rawFinish: string | undefined;
  let refusal = false;
  let output = false;

  // One event: its parts pushed to `out`; false when it was an error part (the caller stops there).
  const handle = (data: string): boolean | Promise<boolean> => {
    if (data === "[DONE]") return true;
    // An argument delta in the exact shape vendors send is valid by construction (the regular
    // expression of tool-argument-coalescing.ts): its text goes to the call without a chunk parse.
    const piece = openAiContinuationText(data);
    if (piece !== undefined) {
      output = true;
      tracker.processDelta({ index: piece.index, function: { arguments: piece.text } } as never);
      return true;
    }
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch (cause) {
      out.push({ type: "error", error: new JSONParseError({ text: data, cause }) });
      return false;
    }
    // secure-json-parse (the SDK's parser) refuses prototype keys; only such texts pay for its check.
    if (data.includes("__proto__") || data.includes("constructor")) {
      return safeParseJSON({ text: data }).then((secure) => {
        if (secure.success) return accept(value, data);
        out.push({ type: "error", error: secure.error });
        return false;
      });
    }
    return accept(value, data);
  };

  // A parsed chunk: its parts pushed to `out`; false when it was an error part.
  const accept = (value: unknown, data: string): boolean => {
    if (isObject(value) && data.includes('"usage"')) repairUsageValue("openai-completions", value);
    if (!validChunk(value)) {
      if (validErrorChunk(value)) {
        const frame = (value as { error: Json }).error;
        const streamError = openAiStreamError(frame);
        // Before any output the SDK throws it as the HTTP answer's error (status from its code).
        const error = output
          ? (streamError ?? frame)
          : new APICallError({
              message: streamError?.message ?? "OpenAI stream failed before any output was generated",
              url: ctx.url,
              requestBodyValues: undefined,
              statusCode: streamError?.statusCode ?? 500,
              responseHeaders: ctx.headers,
              responseBody: JSON.stringify(frame),
              data: frame,
            });
        out.push({ type: "error", error });
        return false;
      }
      out.push({ type: "error", error: new TypeValidationError({ value, cause: new Error("not a Chat Completions chunk") }) });
      return false;
    }
    const chunk = value as Json & { choices: Json[] };
    if (!nullish(chunk.usage)) rawUsage = chunk.usage as Json;
    const choice = chunk.choices[0];
    if (choice === undefined) return true;
    if (!nullish(choice.finish_reason)) rawFinish = choice.finish_reason as string;
    const delta = choice.delta as Json | null | undefined;
    if (nullish(delta)) return true;
    const d = delta as { content?: string | null; refusal?: string | null; tool_calls?: Json[] | null };
    if (!output) output = chunk.choices.some(isOutputChoice);
    if (!nullish(d.content) && d.content!.length > 0) out.push({ type: "text-delta", id: "0", delta: d.content! });
    if (!nullish(d.refusal) && d.refusal!.length > 0) {
      refusal = true;
      out.push({ type: "text-delta", id: "0", delta: d.refusal! });
    }
    if (!nullish(d.tool_calls)) for (const call of d.tool_calls!) tracker.processDelta(call as never);
    return true;
  };

  if (!(yield* handledBatches(ctx, out, handle))) return;
  tracker.flush();
  out.push({
    type: "finish",
    finishReason: rawFinish === undefined ? { unified: "interrupted", raw: undefined } : { unified: finishOf(rawFinish, refusal), raw: rawFinish },
    usage: chatUsage(rawUsage),
  });
  yield out.splice(0);
}

function isOutputChoice(choice: Json): boolean {
  const d = choice.delta as Json | null | undefined;
  if (nullish(d)) return false;
  const has = (v: unknown) => !nullish(v) && (v as { length: number }).length > 0;
  return has(d!.content) || has(d!.refusal) || has(d!.tool_calls) || has(d!.annotations);
}

function finishOf(raw: string, refusal: boolean): "stop" | "length" | "content-filter" | "tool-calls" | "other" {
  switch (raw) {
    case "stop":
      return refusal ? "content-filter" : "stop";
    case "length":
      return "length";
    case "content_filter":
      return "content-filter";
    case "function_call":
    case "tool_calls":
      return "tool-calls";
    default:
      return "other";
  }
}

/** The SDK's usage of a Chat Completions stream (convertOpenAIChatUsage), from the repaired counts. */
function chatUsage(usage: Json | undefined): LanguageModelV4Usage {
  if (usage === undefined) {
    return {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    };
  }
  const prompt = (usage.prompt_tokens as number | null | undefined) ?? 0;
  const completion = (usage.completion_tokens as number | null | undefined) ?? 0;
  const details = (usage.prompt_tokens_details ?? undefined) as Json | undefined;
  const cached = (details?.cached_tokens as number | null | undefined) ?? 0;
  const cacheWrite = (details?.cache_write_tokens as number | null | undefined) ?? undefined;
  const reasoning = ((usage.completion_tokens_details as Json | null | undefined)?.reasoning_tokens as number | null | undefined) ?? 0;
  return {
    inputTokens: { total: prompt, noCache: prompt - cached - (cacheWrite ?? 0), cacheRead: cached, cacheWrite },
    outputTokens: { total: completion, text: Math.max(0, completion - reasoning), reasoning },
  };
}

// openaiChatChunkSchema of @ai-sdk/openai, field for field (zod objects ignore unknown keys).
function validChunk(v: unknown): boolean {
  if (!isObject(v) || !optStr(v.id) || !optNum(v.created) || !optStr(v.model) || !arrayOf(v.choices, validChoice)) return false;
  return nullish(v.usage) || validUsage(v.usage);
}

function validChoice(v: unknown): boolean {
  if (!isObject(v) || !num(v.index) || !optStr(v.finish_reason)) return false;
  if (!nullish(v.delta) && !validDelta(v.delta)) return false;
  return nullish(v.logprobs) || validLogprobs(v.logprobs);
}

function validDelta(v: unknown): boolean {
  if (!isObject(v) || !(nullish(v.role) || v.role === "assistant") || !optStr(v.content) || !optStr(v.refusal)) return false;
  if (!nullish(v.tool_calls) && !arrayOf(v.tool_calls, validToolCall)) return false;
  return nullish(v.annotations) || arrayOf(v.annotations, validAnnotation);
}

function validToolCall(v: unknown): boolean {
  if (!isObject(v) || !num(v.index) || !optStr(v.id) || !(nullish(v.type) || v.type === "function")) return false;
  return isObject(v.function) && optStr(v.function.name) && optStr(v.function.arguments);
}

function validAnnotation(v: unknown): boolean {
  if (!isObject(v) || v.type !== "url_citation" || !isObject(v.url_citation)) return false;
  const c = v.url_citation;
  return num(c.start_index) && num(c.end_index) && typeof c.url === "string" && typeof c.title === "string";
}

const validTop = (v: unknown) => isObject(v) && typeof v.token === "string" && num(v.logprob);
const validLogprob = (v: unknown) => validTop(v) && arrayOf((v as Json).top_logprobs, validTop);

function validLogprobs(v: unknown): boolean {
  if (!isObject(v)) return false;
  return (nullish(v.content) || arrayOf(v.content, validLogprob)) && (nullish(v.refusal) || arrayOf(v.refusal, validLogprob));
}

function validUsage(v: unknown): boolean {
  if (!isObject(v) || !optNum(v.prompt_tokens) || !optNum(v.completion_tokens) || !optNum(v.total_tokens)) return false;
  const p = v.prompt_tokens_details;
  if (!nullish(p) && !(isObject(p) && optNum(p.cached_tokens) && optNum(p.cache_write_tokens))) return false;
  const c = v.completion_tokens_details;
  return nullish(c) || (isObject(c) && optNum(c.reasoning_tokens) && optNum(c.accepted_prediction_tokens) && optNum(c.rejected_prediction_tokens));
}

// openaiErrorDataSchema.
function validErrorChunk(v: unknown): boolean {
  if (!isObject(v) || !isObject(v.error)) return false;
  const e = v.error;
  return typeof e.message === "string" && optStr(e.type) && (nullish(e.code) || typeof e.code === "string" || num(e.code));
}

/** The SDK's reading of an OpenAI error frame (createOpenAIProviderStreamError): its message and an HTTP status. */
function openAiStreamError(frame: Json): { message: string; statusCode: number } | undefined {
  const error = isObject(frame.error) ? frame.error : frame;
  const explicit = isObject(frame.error) || typeof error.type === "string" || "code" in error || "param" in error;
  if (typeof error.message !== "string" || !explicit) return undefined;
  const code = typeof error.code === "string" || typeof error.code === "number" ? error.code : undefined;
  const type = typeof error.type === "string" ? error.type : undefined;
  return { message: error.message, statusCode: statusOf(code, type) };
}

function statusOf(code: string | number | undefined, type: string | undefined): number {
  const explicit = typeof code === "string" && /^\d{3}$/.test(code) ? Number(code) : code;
  if (typeof explicit === "number" && Number.isInteger(explicit) && explicit >= 400 && explicit <= 599) return explicit;
  const words = [code, type]
    .filter((v) => v !== undefined)
    .join(" ")
    .toLowerCase();
  if (["insufficient_quota", "rate_limit"].some((t) => words.includes(t))) return 429;
  if (words.includes("authentication")) return 401;
  if (words.includes("permission")) return 403;
  if (words.includes("not_found")) return 404;
  if (["invalid", "bad_request", "context_length"].some((t) => words.includes(t))) return 400;
  if (words.includes("overload")) return 503;
  if (words.includes("timeout")) return 504;
  return 500;
}
