import {
  APICallError,
  InvalidResponseDataError,
  JSONParseError,
  TypeValidationError,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { createProviderStreamError, safeParseJSON } from "@ai-sdk/provider-utils";
import { repairUsageValue } from "./wire-usage";
import { handledBatches, type LeanStreamContext } from "./lean-sse";

/**
 * An Anthropic Messages event stream read in one loop (issue 22, "a thin turn"), the counterpart of
 * lean-chat-stream.ts: instead of the byte cap, usage-repair and coalescing stages, then the AI SDK's
 * decoder, event parser, zod union and parts stream (and its tee looking for an early error), it
 * yields the parts @ai-sdk/anthropic's `doStream` would yield for what createModelClient reads (text
 * deltas, tool calls, error, finish), in the same order and with the same error classes.
 *
 * Mirrored exactly: message_start (one open message at a time, its tool_use content), text, thinking,
 * redacted_thinking, compaction and tool_use blocks with their deltas, mcp_tool_use, message_delta
 * (stop reason, usage merged as the SDK merges it, iterations), message_stop, ping, error events, the
 * SDK's early-error rule (an error as the first part fails the call as an HTTP answer) and its
 * "interrupted" finish. Not mirrored field for field: server-tool blocks, their results, fallback
 * blocks and citations (we never offer server tools): they are taken when their `type` is one the
 * SDK knows and otherwise ignored, where the SDK would also check their inner shape.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const nullish = (v: unknown) => v === undefined || v === null;
const num = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const str = (v: unknown) => typeof v === "string";
const optStr = (v: unknown) => nullish(v) || str(v);
const optNum = (v: unknown) => nullish(v) || num(v);
const optArray = (v: unknown) => nullish(v) || Array.isArray(v);
const arrayOf = (v: unknown, each: (x: unknown) => boolean) => Array.isArray(v) && v.every(each);

type Block = { type: "text" } | { type: "reasoning" } | { type: "tool-call"; id: string; name: string; input: string };
type Usage = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens_details?: { thinking_tokens?: number | null };
  iterations: Array<{ type: string; input_tokens: number; output_tokens: number }> | null;
};

/** The Messages stream of one call as the SDK's parts (only those createModelClient reads), in one batch per network chunk that produced any. */
export async function* leanMessagesParts(ctx: LeanStreamContext): AsyncGenerator<LanguageModelV4StreamPart[]> {
  const out: LanguageModelV4StreamPart[] = [];
  const blocks = new Map<number, Block>();
  const usage: Usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, iterations: null };
  let rawUsage: Json | undefined;
  let finishReason: { unified: "stop" | "length" | "content-filter" | "tool-calls" | "other"; raw: string | undefined } = {
    unified: "other",
    raw: undefined,
  };
  let open = false;
  let activeId: unknown;
  let blockType: string | undefined;
  let broken = false; // a second message opened while one was: the SDK reads nothing further
  let lastFinish: Extract<LanguageModelV4StreamPart, { type: "finish" }> | undefined;
  let hasOutput = false;
  let streamError = false;
  // The SDK's doStream reads the first part (pings aside) before returning: an error there is thrown
  // as the HTTP answer's error. `parted` is whether any part came yet (events without parts do not count).
  let parted = false;
  const part = (p: LanguageModelV4StreamPart) => {
    parted = true;
    if (p.type === "text-delta" || p.type === "reasoning-delta" || p.type === "tool-input-delta") hasOutput ||= p.delta.length > 0;
    else if (p.type === "tool-call") hasOutput = true;
    else if (p.type === "response-metadata") hasOutput = false;
    out.push(p);
  };
  const fail = (error: unknown) => {
    streamError = true;
    if (parted) {
      out.push({ type: "error", error });
      return;
    }
    parted = true;
    if (!isStreamError(error)) {
      out.push({ type: "error", error: new Error("Expected a normalized Anthropic stream error") });
      return;
    }
    out.push({
      type: "error",
      error: new APICallError({
        message: error.message,
        url: ctx.url,
        requestBodyValues: undefined,
        statusCode: error.statusCode ?? 500,
        responseHeaders: ctx.headers,
        responseBody: JSON.stringify(error.data),
        isRetryable: error.isRetryable ?? false,
      }),
    });
  };

  // One event: its parts pushed to `out`; false once the call has failed (the caller stops there).
  const handle = (data: string): boolean | Promise<boolean> => {
    if (broken || data === "[DONE]") return true;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch (cause) {
      fail(new JSONParseError({ text: data, cause }));
      return false;
    }
    // secure-json-parse (the SDK's parser) refuses prototype keys; only such texts pay for its check.
    if (data.includes("__proto__") || data.includes("constructor")) {
      return safeParseJSON({ text: data }).then((secure) => {
        if (secure.success) return accept(value, data);
        fail(secure.error);
        return false;
      });
    }
    return accept(value, data);
  };

  // A parsed event: its parts pushed to `out`; false once the call has failed.
  const accept = (value: unknown, data: string): boolean => {
    if (isObject(value) && data.includes('"usage"')) repairUsageValue("anthropic-messages", value);
    if (!validEvent(value)) {
      fail(new TypeValidationError({ value, cause: new Error("not a Messages event") }));
      return false;
    }
    const event = value as Json;
    switch (event.type) {
      case "ping":
        return true;
      case "content_block_start": {
        const b = event.content_block as Json;
        const index = event.index as number;
        if (b.type === "fallback") {
          part({ type: "custom", kind: "anthropic.fallback" } as never);
          return true;
        }
        blockType = b.type as string;
        switch (b.type) {
          case "text":
          case "compaction":
            blocks.set(index, { type: "text" });
            part({ type: "text-start", id: String(index) });
            if (b.type === "compaction" && !nullish(b.signature) && !nullish(b.content) && b.content !== "")
              part({ type: "text-delta", id: String(index), delta: b.content as string });
            return true;
          case "thinking":
          case "redacted_thinking":
            blocks.set(index, { type: "reasoning" });
            part({ type: "reasoning-start", id: String(index) });
            return true;
          case "tool_use": {
            if (!nullish(b.toolset_name)) {
              // No computer toolset is ever offered: the SDK throws for any toolset member.
              fail(
                new InvalidResponseDataError({ data: { toolsetName: b.toolset_name, memberName: b.name }, message: "unavailable toolset member" }),
              );
              return false;
            }
            const input = isObject(b.input) && Object.keys(b.input).length > 0 ? JSON.stringify(b.input) : "";
            blocks.set(index, { type: "tool-call", id: b.id as string, name: b.name as string, input });
            part({ type: "tool-input-start", id: b.id as string, toolName: b.name as string });
            return true;
          }
          case "mcp_tool_use":
            part({ type: "tool-call", toolCallId: b.id as string, toolName: b.name as string, input: JSON.stringify(b.input) });
            return true;
          default:
            // Server tools and their results (see the header): parts createModelClient does not read.
            part({ type: "custom", kind: "anthropic.server-block" } as never);
            return true;
        }
      }
      case "content_block_stop": {
        const index = event.index as number;
        const block = blocks.get(index);
        if (block !== undefined) {
          if (block.type === "text") part({ type: "text-end", id: String(index) });
          else if (block.type === "reasoning") part({ type: "reasoning-end", id: String(index) });
          else {
            part({ type: "tool-input-end", id: block.id });
            part({ type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.input === "" ? "{}" : block.input });
          }
          blocks.delete(index);
        }
        blockType = undefined;
        return true;
      }
      case "content_block_delta": {
        const d = event.delta as Json;
        const id = String(event.index);
        switch (d.type) {
          case "text_delta":
            part({ type: "text-delta", id, delta: d.text as string });
            return true;
          case "thinking_delta":
            part({ type: "reasoning-delta", id, delta: d.thinking as string });
            return true;
          case "signature_delta":
            if (blockType === "thinking") part({ type: "reasoning-delta", id, delta: "" });
            return true;
          case "compaction_delta":
            if (!nullish(d.content)) part({ type: "text-delta", id, delta: d.content as string });
            return true;
          case "input_json_delta": {
            const delta = d.partial_json as string;
            const block = blocks.get(event.index as number);
            if (delta.length === 0 || block?.type !== "tool-call") return true;
            part({ type: "tool-input-delta", id: block.id, delta });
            block.input += delta;
            return true;
          }
          default:
            return true; // citations_delta: sources, not read
        }
      }
      case "message_start": {
        const m = event.message as Json;
        if (open) {
          if (activeId === m.id) return true;
          broken = true;
          fail(
            new InvalidResponseDataError({
              data: value,
              message: `Received message_start for message ${JSON.stringify(m.id)} while message ${JSON.stringify(activeId)} is still open.`,
            }),
          );
          return false;
        }
        const u = m.usage as Json;
        open = true;
        activeId = m.id;
        usage.input_tokens = u.input_tokens as number;
        usage.cache_read_input_tokens = (u.cache_read_input_tokens as number | null | undefined) ?? 0;
        usage.cache_creation_input_tokens = (u.cache_creation_input_tokens as number | null | undefined) ?? 0;
        rawUsage = { ...u };
        if (!nullish(m.stop_reason)) finishReason = { unified: stopReasonOf(m.stop_reason as string), raw: m.stop_reason as string };
        part({ type: "response-metadata" } as never);
        if (!nullish(m.content))
          for (const c of m.content as Json[]) {
            const input = JSON.stringify(c.input ?? {});
            part({ type: "tool-input-start", id: c.id as string, toolName: c.name as string });
            part({ type: "tool-input-delta", id: c.id as string, delta: input });
            part({ type: "tool-input-end", id: c.id as string });
            part({ type: "tool-call", toolCallId: c.id as string, toolName: c.name as string, input });
          }
        return true;
      }
      case "message_delta": {
        const u = event.usage as Json;
        const d = event.delta as Json;
        if (!nullish(u.input_tokens) && usage.input_tokens !== u.input_tokens) usage.input_tokens = u.input_tokens as number;
        usage.output_tokens = u.output_tokens as number;
        if (!nullish(u.output_tokens_details)) usage.output_tokens_details = u.output_tokens_details as Usage["output_tokens_details"];
        if (!nullish(u.cache_read_input_tokens)) usage.cache_read_input_tokens = u.cache_read_input_tokens as number;
        if (!nullish(u.cache_creation_input_tokens)) usage.cache_creation_input_tokens = u.cache_creation_input_tokens as number;
        if (!nullish(u.iterations)) usage.iterations = u.iterations as Usage["iterations"];
        const raw = (d.stop_reason as string | null | undefined) ?? undefined;
        finishReason = { unified: stopReasonOf(raw), raw };
        rawUsage = { ...rawUsage, ...u };
        return true;
      }
      case "message_stop": {
        open = false;
        activeId = undefined;
        lastFinish = { type: "finish", finishReason, usage: messagesUsage(usage, rawUsage) };
        part(lastFinish);
        hasOutput = false;
        return true;
      }
      default: {
        // "error"
        const e = event.error as Json;
        const inferred = errorMetadata(e.type as string);
        fail(
          createProviderStreamError({
            message: e.message as string,
            type: e.type as string,
            code: (e.code as string | number | null | undefined) ?? undefined,
            statusCode: (e.statusCode as number | null | undefined) ?? inferred.statusCode,
            isRetryable: (e.isRetryable as boolean | null | undefined) ?? inferred.isRetryable,
            data: "data" in e ? e.data : e,
          }),
        );
        return false;
      }
    }
  };

  if (!(yield* handledBatches(ctx, out, handle))) return;
  if (hasOutput && !streamError) {
    yield [
      {
        type: "finish",
        finishReason: { unified: "interrupted", raw: undefined },
        usage: lastFinish?.usage ?? {
          inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: undefined, text: undefined, reasoning: undefined },
        },
      },
    ];
  }
}

function isStreamError(e: unknown): e is { message: string; statusCode?: number; isRetryable?: boolean; data: unknown } {
  return typeof e === "object" && e !== null && !(e instanceof Error) && "message" in e && "data" in e;
}

/** mapAnthropicStopReason (no JSON response tool: we never ask for structured output). */
function stopReasonOf(raw: string | undefined): "stop" | "length" | "content-filter" | "tool-calls" | "other" {
  switch (raw) {
    case "pause_turn":
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "refusal":
      return "content-filter";
    case "tool_use":
      return "tool-calls";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    default:
      return "other";
  }
}

/** getAnthropicStreamErrorMetadata. */
function errorMetadata(type: string): { statusCode?: number; isRetryable?: boolean } {
  const table: Record<string, [number, boolean]> = {
    api_error: [500, true],
    overloaded_error: [529, true],
    rate_limit_error: [429, true],
    request_too_large: [413, false],
    authentication_error: [401, false],
    permission_error: [403, false],
    not_found_error: [404, false],
    billing_error: [400, false],
    invalid_request_error: [400, false],
  };
  const hit = Object.hasOwn(table, type) ? table[type] : undefined;
  return hit ? { statusCode: hit[0], isRetryable: hit[1] } : {};
}

/** convertAnthropicUsage, from the repaired counts. */
function messagesUsage(usage: Usage, rawUsage: Json | undefined): LanguageModelV4Usage {
  const reasoning = usage.output_tokens_details?.thinking_tokens ?? undefined;
  let input = usage.input_tokens;
  let output = usage.output_tokens;
  const iterations = usage.iterations;
  if (iterations && iterations.length > 0 && !iterations.some((it) => it.type === "fallback_message")) {
    const executor = iterations.filter((it) => it.type === "compaction" || it.type === "message");
    if (executor.length > 0) {
      input = executor.reduce((a, it) => a + it.input_tokens, 0);
      output = executor.reduce((a, it) => a + it.output_tokens, 0);
    }
  }
  return {
    inputTokens: {
      total: input + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
      noCache: input,
      cacheRead: usage.cache_read_input_tokens,
      cacheWrite: usage.cache_creation_input_tokens,
    },
    outputTokens: { total: output, text: reasoning == null ? undefined : output - reasoning, reasoning },
    raw: (rawUsage ?? usage) as never,
  };
}

// anthropicChunkSchema of @ai-sdk/anthropic, by event type (zod objects ignore unknown keys).
function validEvent(v: unknown): boolean {
  if (!isObject(v)) return false;
  switch (v.type) {
    case "ping":
    case "message_stop":
      return true;
    case "content_block_stop":
      return num(v.index);
    case "content_block_start":
      return num(v.index) && validBlock(v.content_block);
    case "content_block_delta":
      return num(v.index) && validDelta(v.delta);
    case "message_start":
      return validMessage(v.message);
    case "message_delta":
      return validMessageDelta(v);
    case "error": {
      const e = v.error;
      if (!isObject(e) || !str(e.type) || !str(e.message)) return false;
      return (
        (nullish(e.code) || str(e.code) || num(e.code)) && optNum(e.statusCode) && (nullish(e.isRetryable) || typeof e.isRetryable === "boolean")
      );
    }
    default:
      return false;
  }
}

const SERVER_BLOCKS = new Set([
  "server_tool_use",
  "mcp_tool_result",
  "web_fetch_tool_result",
  "web_search_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "advisor_tool_result",
  "fallback",
]);

function validBlock(b: unknown): boolean {
  if (!isObject(b)) return false;
  switch (b.type) {
    case "text":
      return str(b.text);
    case "thinking":
      return str(b.thinking);
    case "redacted_thinking":
      return str(b.data);
    case "compaction":
      return optStr(b.content) && optStr(b.signature);
    case "tool_use":
      return str(b.id) && str(b.name) && (b.input === undefined || isObject(b.input)) && validCaller(b.caller) && optStr(b.toolset_name);
    case "mcp_tool_use":
      return str(b.id) && str(b.name) && str(b.server_name);
    default:
      return SERVER_BLOCKS.has(b.type as string);
  }
}

// anthropicToolCallCallerSchema, loosely: an object with a string type (only metadata is made of it).
const validCaller = (c: unknown) => c === undefined || (isObject(c) && str(c.type));

function validDelta(d: unknown): boolean {
  if (!isObject(d)) return false;
  switch (d.type) {
    case "input_json_delta":
      return str(d.partial_json);
    case "text_delta":
      return str(d.text);
    case "thinking_delta":
      return str(d.thinking);
    case "signature_delta":
      return str(d.signature);
    case "compaction_delta":
      return optStr(d.content);
    case "citations_delta":
      return isObject(d.citation);
    default:
      return false;
  }
}

function validMessage(m: unknown): boolean {
  if (!isObject(m) || !optStr(m.id) || !optStr(m.model) || !optStr(m.role) || !optStr(m.service_tier) || !optStr(m.stop_reason)) return false;
  const u = m.usage;
  if (!isObject(u) || !optStr(u.service_tier) || !num(u.input_tokens) || !optNum(u.cache_creation_input_tokens) || !optNum(u.cache_read_input_tokens))
    return false;
  const toolUse = (c: unknown) => isObject(c) && c.type === "tool_use" && str(c.id) && str(c.name) && validCaller(c.caller) && optStr(c.toolset_name);
  if (!nullish(m.content) && !arrayOf(m.content, toolUse)) return false;
  if (!optArray(m.input_transformations)) return false;
  return nullish(m.container) || (isObject(m.container) && str(m.container.expires_at) && str(m.container.id));
}

const ITERATION_TYPES = new Set(["compaction", "message", "advisor_message", "fallback_message"]);

function validMessageDelta(v: Json): boolean {
  const d = v.delta;
  if (!isObject(d) || !optStr(d.stop_reason) || !optStr(d.stop_sequence) || !optArray(d.safeguard_results)) return false;
  if (!nullish(d.stop_details) && !isObject(d.stop_details)) return false;
  const c = d.container;
  if (!nullish(c) && !(isObject(c) && str(c.expires_at) && str(c.id) && optArray(c.skills))) return false;
  const u = v.usage;
  if (!isObject(u) || !optStr(u.service_tier) || !optNum(u.input_tokens) || !num(u.output_tokens)) return false;
  if (!optNum(u.cache_creation_input_tokens) || !optNum(u.cache_read_input_tokens)) return false;
  const details = u.output_tokens_details;
  if (!nullish(details) && !(isObject(details) && optNum(details.thinking_tokens))) return false;
  const iteration = (it: unknown) =>
    isObject(it) &&
    ITERATION_TYPES.has(it.type as string) &&
    optStr(it.model) &&
    num(it.input_tokens) &&
    num(it.output_tokens) &&
    optNum(it.cache_creation_input_tokens) &&
    optNum(it.cache_read_input_tokens);
  if (!nullish(u.iterations) && !arrayOf(u.iterations, iteration)) return false;
  if (!optArray(v.input_transformations)) return false;
  return nullish(v.context_management) || (isObject(v.context_management) && Array.isArray(v.context_management.applied_edits));
}
