import type { LanguageModelV4StreamPart, LanguageModelV4Usage } from "@ai-sdk/provider";
import type { RedactOptions } from "../observability";
import { systemClock, type Clock } from "../runtime";
import { SentSecretStream, sentSecretList } from "../observability";
import { observedFetch } from "./observed-fetch";
import { wireNames } from "./wire-names";
import { toProviderError, type CallEnd } from "./provider-errors";
import { toLanguageModelPrompt, toLanguageModelTools } from "./to-language-model-prompt";
import { tokenCount } from "./token-count";
import { maskedToolCall } from "./tool-call-input";
import {
  ProviderError,
  type ModelClient,
  type ModelEvent,
  type ModelRequest,
  type ModelUsage,
  type ResolvedModel,
  type Sampling,
  type TransportObserver,
} from "./types";
import type { ClaimedStream } from "./observed-fetch";
import type { ErrorMessageOf, WireRequest } from "./lean-wire";
import { maxOutputTokensFor, wireModel } from "./wire-model";
import { chainStages, toolArgumentCoalescing } from "./tool-argument-coalescing";
import { usageRepairStage } from "./wire-usage";

/**
 * Chat Completions streams are read by lean-chat-stream.ts (about 1 ms of CPU less per model call
 * than the AI SDK's stream pipeline: bench/experiments/chat-cpu-ab.ts), Messages streams by
 * lean-messages-stream.ts. Off only in the tests that run every stream through both readers and
 * require the same events and failures (test/unit/providers/lean-chat-stream.test.ts,
 * lean-messages-stream.test.ts): the SDK's pipeline is the reference.
 */
export const LEAN_READER = { enabled: true };

/**
 * With the lean reader, a Chat Completions request too is built and sent by us
 * (lean-chat-request.ts, lean-wire.ts), not by the SDK's `doStream` (its prompt conversion, option
 * parsing, header merging and response pipeline: issue 22), and so is a Messages request
 * (lean-messages-request.ts), for every model family (the SDK's per-family rules are rebuilt:
 * openai-chat-family.ts, anthropic-model-family.ts). Off only in the tests that send every request
 * both ways and require the same bytes and failures (test/unit/providers/lean-chat-request.test.ts,
 * lean-messages-request.test.ts): the SDK's request is the reference.
 */
export const LEAN_WIRE = { enabled: true };

/** The wire's own request for this call, or undefined when its builder leaves the call to the SDK. */
async function leanRequest(
  model: ResolvedModel,
  request: ModelRequest,
  sampling: Sampling,
  wire: (name: string) => string,
): Promise<{ request: WireRequest; messageOf: ErrorMessageOf } | undefined> {
  if (model.api === "anthropic-messages") {
    const { messagesRequest, messagesErrorMessage } = await import("./lean-messages-request");
    const built = messagesRequest(model, request.messages, request.tools, sampling, wire);
    return built && { request: built, messageOf: messagesErrorMessage };
  }
  const { chatCompletionsRequest, chatCompletionsErrorMessage } = await import("./lean-chat-request");
  const built = chatCompletionsRequest(model, request.messages, request.tools, sampling, wire);
  return built && { request: built, messageOf: chatCompletionsErrorMessage };
}

/**
 * Anthropic: no `eager_input_streaming` on tools (tool input arrives whole per block, JSON-checked by
 * the API; calls are emitted at block end anyway), which keeps requests to the fields every
 * Messages-compatible endpoint takes.
 */
const WIRE_OPTIONS = { anthropic: { toolStreaming: false } };

export type ModelClientOptions = {
  /** Deadline of one whole call: request, headers and the full stream. */
  timeoutMs: number;
  observer?: TransportObserver;
  /** The fetch the wire client uses (tests; defaults to the global one). */
  fetch?: typeof fetch;
  /** For the observer's response times and `retry-after` dates (defaults to the system clock). */
  clock?: Clock;
  /** Secrets and patterns masked in provider text a failure carries, beside the model's own key. */
  redaction?: RedactOptions;
};

/**
 * A `ModelClient` for a resolved model: one streamed request per `stream()` call, no retries (the
 * agent loop decides), failures only as `ProviderError`.
 */
export function createModelClient(model: ResolvedModel, opts: ModelClientOptions): ModelClient {
  return { model, stream: (request) => streamCall(model, opts, request) };
}

async function* streamCall(model: ResolvedModel, opts: ModelClientOptions, request: ModelRequest): AsyncGenerator<ModelEvent> {
  const clock = opts.clock ?? systemClock;
  if (request.signal.aborted) throw new ProviderError("aborted", "the model call was cancelled by its caller", 0);

  const controller = new AbortController();
  let ended: CallEnd;
  const onAbort = () => {
    ended ??= "aborted";
    controller.abort(request.signal.reason);
  };
  request.signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    ended ??= "timeout";
    controller.abort(new DOMException(`model call deadline of ${opts.timeoutMs} ms`, "TimeoutError"));
  }, opts.timeoutMs);

  // Catalog names a provider would refuse travel as aliases, mapped back on the way in.
  const names = wireNames(request.tools, request.messages);
  // Usage with counts of the wrong type counts 0 instead of failing the chunk it came in, and a tool
  // call's argument deltas reach the wire client as one event (both in the bound's pass).
  const stage = () => chainStages(usageRepairStage(model.api), toolArgumentCoalescing(model.api));
  // A Chat Completions or Messages stream is read by one loop of ours (lean-*-stream.ts).
  const lean = LEAN_READER.enabled;
  const transport = observedFetch(opts.fetch ?? globalThis.fetch.bind(globalThis), clock, opts.observer, stage, lean);
  const fail = (error: unknown) =>
    toProviderError(error, {
      ended,
      timeoutMs: opts.timeoutMs,
      provider: model.provider,
      redaction: { secrets: [model.apiKey, ...(opts.redaction?.secrets ?? [])], patterns: opts.redaction?.patterns ?? [] },
      now: clock.now(),
      status: transport.status(),
      sent: transport.sent(),
      overflowed: transport.overflowed(),
    });

  // A provider echoing its key (or another registered secret) gets it masked where its reply enters
  // (observability/sent-secrets.ts): text deltas through a hold-back stream, each tool call whole
  // (its id, name and input: tool-call-input.ts).
  const secrets = sentSecretList([model.apiKey, ...(opts.redaction?.secrets ?? [])]);
  const textMask = new SentSecretStream(secrets);
  const offered = new Set(request.tools.map((t) => t.name));

  // The answer's parts, a batch at a time (the lean readers give one per network chunk; the SDK's stream one part each).
  let reader: { read(): Promise<IteratorResult<LanguageModelV4StreamPart[]>>; cancel(): Promise<unknown> } | undefined;
  try {
    const sampling = {
      maxOutputTokens: maxOutputTokensFor(model, request.maxOutputTokens),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
    };
    // The request built and sent by us (lean-*-request.ts), unless the wire's builder hands it to the SDK.
    // A request it cannot build (a key `Headers` refuses) fails as the SDK's does: a ProviderError, before anything is sent.
    let own: Awaited<ReturnType<typeof leanRequest>>;
    try {
      own = lean && LEAN_WIRE.enabled ? await leanRequest(model, request, sampling, names.toWire) : undefined;
    } catch (error) {
      throw fail(error);
    }
    let claimed: (ClaimedStream & { tapped: boolean }) | undefined;
    if (own !== undefined) {
      let response: Response;
      try {
        response = await (await import("./lean-wire")).sendWireRequest(transport.fetch, own.request, controller.signal, own.messageOf);
      } catch (error) {
        throw fail(error);
      }
      const events = transport.claimed();
      if (events !== undefined) claimed = { ...events, tapped: true };
      else if (response.body === null) throw fail((await import("./lean-wire")).emptyBodyError(response, own.request.url));
      // A 2xx that is no event stream is parsed as one all the same, as the SDK does (observed-fetch.ts bounded it; nothing taps it).
      else claimed = { body: response.body, headers: Object.fromEntries(response.headers), url: own.request.url, tapped: false };
    } else {
      let result;
      try {
        result = await (
          await wireModel(model, transport.fetch)
        ).doStream({
          prompt: toLanguageModelPrompt(request.messages, model.api, names.toWire),
          ...(request.tools.length > 0 ? { tools: toLanguageModelTools(request.tools, names.toWire) } : {}),
          ...sampling,
          abortSignal: controller.signal,
          providerOptions: WIRE_OPTIONS,
        });
      } catch (error) {
        throw fail(error);
      }
      const events = transport.claimed();
      if (events !== undefined) {
        result.stream.cancel().catch(() => {});
        claimed = { ...events, tapped: true };
      } else {
        const parts = result.stream.getReader();
        reader = {
          read: async () => {
            const next = await parts.read();
            return next.done ? { done: true, value: undefined } : { done: false, value: [next.value] };
          },
          cancel: () => parts.cancel(),
        };
      }
    }
    if (claimed !== undefined) {
      // Imported with the first call, like the wire clients (wire-model.ts): no startup cost for the Worker.
      const read =
        model.api === "openai-completions"
          ? (await import("./lean-chat-stream")).leanChatCompletionsParts
          : (await import("./lean-messages-stream")).leanMessagesParts;
      const parts = read({
        ...claimed,
        onEvent: claimed.tapped ? opts.observer?.sseEvent : undefined,
        onOverflow: transport.overflow,
        whole: request.whole === true,
      });
      reader = { read: () => parts.next(), cancel: () => parts.return(undefined) };
    }
    // Every branch above set one; this only tells the type checker.
    if (reader === undefined) throw new Error("unreachable: no reader");
    let finish: Extract<LanguageModelV4StreamPart, { type: "finish" }> | undefined;
    for (;;) {
      let next: IteratorResult<LanguageModelV4StreamPart[]>;
      try {
        next = await reader.read();
      } catch (error) {
        throw fail(error);
      }
      if (next.done) break;
      for (const part of next.value) {
        if (part.type === "text-delta") {
          const shown = part.delta === "" ? "" : textMask.push(part.delta);
          if (shown !== "") yield { type: "text-delta", text: shown };
        } else if (part.type === "tool-call") {
          yield { type: "tool-call", call: maskedToolCall(part.toolCallId, names.fromWire(part.toolName), part.input, secrets, offered) };
        } else if (part.type === "error") {
          throw fail(part.error);
        } else if (part.type === "finish") {
          finish = part;
        }
      }
    }
    // The caller or the deadline may have fired while the last chunk was in flight.
    if (ended !== undefined) throw fail(undefined);
    const reason = finish?.finishReason.unified;
    if (finish === undefined || reason === undefined || reason === "interrupted" || reason === "error") {
      const status = transport.status() ?? 0;
      throw new ProviderError(
        "provider_unavailable",
        `the stream of provider "${model.provider}" ended before it said the answer was complete`,
        status,
      );
    }
    const rest = textMask.flush();
    if (rest !== "") yield { type: "text-delta", text: rest };
    const done: ModelEvent = { type: "finish", finishReason: reason, usage: toModelUsage(finish.usage), requestBytes: transport.requestBytes() };
    yield done;
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener("abort", onAbort);
    // A consumer that stops early (or a failure) must not leave the HTTP stream open.
    controller.abort();
    reader?.cancel().catch(() => {});
  }
}

/**
 * Cost-ready usage: `inputTokens` counts only input neither read from nor written to the cache.
 * The SDK's `noCache` is exactly that for both wire formats (OpenAI's `prompt_tokens` minus
 * `cached_tokens`; Anthropic's `input_tokens`, which excludes cache tokens); a provider that sends
 * only a total gets the cache counts taken off it. Every field is the provider's own number, so
 * each passes `tokenCount` (no negative, fractional or unbounded counts reach meta or the cost).
 */
export function toModelUsage(usage: LanguageModelV4Usage): ModelUsage {
  const cacheReadTokens = tokenCount(usage.inputTokens.cacheRead);
  const cacheWriteTokens = tokenCount(usage.inputTokens.cacheWrite);
  const inputTokens =
    usage.inputTokens.noCache !== undefined
      ? tokenCount(usage.inputTokens.noCache)
      : tokenCount(Math.max(0, tokenCount(usage.inputTokens.total) - cacheReadTokens - cacheWriteTokens));
  return { inputTokens, outputTokens: tokenCount(usage.outputTokens.total), cacheReadTokens, cacheWriteTokens };
}
