import type { LanguageModelV4 } from "@ai-sdk/provider";
import type { ResolvedModel } from "./types";

/**
 * The kept client of a model's wire format, at the AI SDK's LanguageModel spec level (`doStream`):
 * OpenAI Chat Completions (`.chat()`, POST `{baseUrl}/chat/completions`; never the Responses API) or
 * Anthropic Messages (POST `{baseUrl}/messages`). The agent loop is ours, so nothing here retries or
 * loops: `doStream` makes exactly one request. `fetch` is the call's observed fetch.
 *
 * The provider packages are imported on the first model call, not with the Worker: evaluating them
 * (their zod schemas, their default instances reading `process.env`) was a large share of the
 * Worker's startup CPU, which every request to a cold isolate pays, /chat or not.
 */
export async function wireModel(model: ResolvedModel, fetch: typeof globalThis.fetch): Promise<LanguageModelV4> {
  switch (model.api) {
    case "openai-completions": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({ baseURL: model.baseUrl, apiKey: model.apiKey, fetch }).chat(model.wireModel);
    }
    case "anthropic-messages": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ baseURL: model.baseUrl, apiKey: model.apiKey, fetch }).messages(model.wireModel);
    }
  }
}

/** The Messages API refuses a request without `max_tokens`; Chat Completions lets the model decide. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** A turn's `maxOutputTokens`, never over the model row's `maxTokens`; without one, the row's, then the wire's default. */
export function maxOutputTokensFor(model: ResolvedModel, requested: number | undefined): number | undefined {
  if (requested !== undefined) return model.maxOutputTokens !== undefined ? Math.min(requested, model.maxOutputTokens) : requested;
  return model.maxOutputTokens ?? (model.api === "anthropic-messages" ? ANTHROPIC_DEFAULT_MAX_TOKENS : undefined);
}
