import type { ModelTool } from "../turns";
import { isPlainObject } from "./to-language-model-prompt";
import type { ModelMessage, ResolvedModel, Sampling } from "./types";
import { wireHeaders, type ErrorMessageOf, type WireRequest } from "./lean-wire";

/**
 * The Chat Completions request the AI SDK's `.chat()` model sends for one of our calls (issue 22,
 * "a thin turn"), built directly: the same URL, headers and JSON text, key for key, without its
 * provider-option parsing, model-catalog lookup, schema normalisation and prompt conversion.
 * test/unit/providers/lean-chat-request.test.ts sends a corpus of calls both ways and requires the
 * captured requests to be identical.
 *
 * Only what applies to our inputs is rebuilt; `undefined` hands the call back to the SDK where it
 * would shape the request in ways not rebuilt here:
 * - a model id of a family the SDK knows (`o<N>`, `gpt-<N>[.<M>][-…]`, `gpt-4o…`: the exact
 *   expressions of its model catalog): reasoning models get `developer` system messages,
 *   `max_completion_tokens`, dropped sampling settings, `reasoning_effort`;
 * - a tool schema the SDK would rewrite (`propertyNames`, `pattern`, `allOf`), or a blank base URL
 *   (the SDK refuses it before sending).
 */
export function chatCompletionsRequest(
  model: ResolvedModel,
  messages: readonly ModelMessage[],
  tools: readonly ModelTool[],
  sampling: Sampling,
  wire: (name: string) => string,
): WireRequest | undefined {
  if (SDK_KNOWN_MODEL.some((re) => re.test(model.wireModel)) || model.baseUrl.trim() === "") return undefined;
  const wireTools = tools.length > 0 ? toolDefinitions(tools, wire) : undefined;
  if (wireTools === null) return undefined;
  // Key order is the SDK's (getArgs' baseArgs, then tools, then the stream fields); absent fields are left out as JSON.stringify leaves out undefined.
  const body: Record<string, unknown> = { model: model.wireModel };
  if (sampling.maxOutputTokens !== undefined) body.max_tokens = sampling.maxOutputTokens;
  if (sampling.temperature !== undefined) body.temperature = sampling.temperature;
  if (sampling.topP !== undefined) body.top_p = sampling.topP;
  body.messages = chatMessages(messages, wire);
  if (wireTools !== undefined) body.tools = wireTools;
  body.stream = true;
  body.stream_options = { include_usage: true };
  return {
    url: `${model.baseUrl.replace(/\/$/, "")}/chat/completions`,
    headers: wireHeaders("openai-completions", { authorization: `Bearer ${model.apiKey}` }),
    body: JSON.stringify(body),
  };
}

/** The SDK's model-family expressions (getOSeriesVersion, getGptVersion, gpt-4o): ids it shapes requests for. */
const SDK_KNOWN_MODEL = [/^o\d+(?:-|$)/, /^gpt-\d+(?:\.\d+)?(?:-.+)?$/, /^gpt-4o(?:-|$)/];

/**
 * Keywords normalizeOpenAIJsonSchema rewrites (drops `propertyNames` and lookaround patterns,
 * inlines a lone `allOf` reference); any schema holding one goes through the SDK.
 */
const REWRITTEN_KEYWORDS = /"(?:propertyNames|pattern|allOf)"/;

/** Tool definitions per tools array and wire names (a /chat call sends the same array every round); null: the SDK's to build. */
function toolDefinitions(tools: readonly ModelTool[], wire: (name: string) => string): unknown[] | null {
  const names = tools.map((t) => wire(t.name));
  const hit = definitions.get(tools);
  if (hit && hit.names.every((n, i) => n === names[i])) return hit.out;
  let out: unknown[] | null = tools.map((tool, i) => ({
    type: "function",
    function: { name: names[i], description: tool.description, parameters: tool.parameters },
  }));
  if (REWRITTEN_KEYWORDS.test(JSON.stringify(out))) out = null;
  definitions.set(tools, { names, out });
  return out;
}
const definitions = new WeakMap<readonly ModelTool[], { names: string[]; out: unknown[] | null }>();

/** convertToOpenAIChatMessages for our messages (to-language-model-prompt.ts has the same rules for the SDK path). */
function chatMessages(messages: readonly ModelMessage[], wire: (name: string) => string): unknown[] {
  const out: unknown[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "system":
      case "user":
        out.push({ role: m.role, content: m.content });
        break;
      case "assistant": {
        const calls = (m.toolCalls ?? []).map((call) => ({
          id: call.id,
          type: "function",
          // Arguments that never parsed to an object are replayed as {} (toolCallPart).
          function: {
            name: wire(call.name),
            arguments: JSON.stringify(call.inputError === undefined && isPlainObject(call.input) ? call.input : {}),
          },
        }));
        // The SDK sends null content beside tool calls when there is no text.
        out.push(calls.length > 0 ? { role: "assistant", content: m.content || null, tool_calls: calls } : { role: "assistant", content: m.content });
        break;
      }
      case "tool":
        // No error flag on Chat Completions: a failed result is the loop's own text.
        out.push({ role: "tool", tool_call_id: m.toolCallId, content: m.content });
        break;
    }
  }
  return out;
}

/** The message of a Chat Completions error body (the SDK's openaiErrorDataSchema, then `error.message`). */
export const chatCompletionsErrorMessage: ErrorMessageOf = (data) => {
  const error = isPlainObject(data) ? data.error : undefined;
  if (!isPlainObject(error) || typeof error.message !== "string") return undefined;
  if (error.type != null && typeof error.type !== "string") return undefined;
  if (error.code != null && typeof error.code !== "string" && typeof error.code !== "number") return undefined;
  return error.message;
};
