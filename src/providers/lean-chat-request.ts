import type { ModelTool } from "../turns";
import { isPlainObject } from "./to-language-model-prompt";
import type { ModelMessage, ResolvedModel, Sampling } from "./types";
import { wireHeaders, type ErrorMessageOf, type WireRequest } from "./lean-wire";
import { chatFamilyRules } from "./openai-chat-family";
import { openAIToolSchema } from "./openai-tool-schema";

/**
 * The Chat Completions request the AI SDK's `.chat()` model sends for one of our calls (issue 22,
 * "a thin turn"), built directly: the same URL, headers and JSON text, key for key, without its
 * provider-option parsing, model-catalog lookup and prompt conversion.
 * test/unit/providers/lean-chat-request.test.ts sends a corpus of calls both ways, for an id of
 * every model family the SDK shapes, and requires the captured requests to be identical.
 *
 * The SDK's per-family rules that reach our inputs are openai-chat-family.ts; its tool-schema
 * normalisation is openai-tool-schema.ts. `undefined` hands the call back to the SDK only where
 * the SDK would fail it before sending: a blank base URL, or a tool schema its normalisation
 * throws on (a non-string `propertyNames` schema, `null` where a subschema belongs).
 */
export function chatCompletionsRequest(
  model: ResolvedModel,
  messages: readonly ModelMessage[],
  tools: readonly ModelTool[],
  sampling: Sampling,
  wire: (name: string) => string,
): WireRequest | undefined {
  if (model.baseUrl.trim() === "") return undefined;
  const wireTools = tools.length > 0 ? toolDefinitions(tools, wire) : undefined;
  if (wireTools === null) return undefined;
  const family = chatFamilyRules(model.wireModel);
  const effortNone = family.effortNoneWithTools && wireTools !== undefined;
  // Reasoning models take no sampling settings, except at effort "none" (openai-chat-family.ts).
  const samples = !family.reasoning || effortNone;
  // Key order is the SDK's (getArgs' baseArgs, then tools, then the stream fields); absent fields are left out as JSON.stringify leaves out undefined.
  const body: Record<string, unknown> = { model: model.wireModel };
  if (!family.reasoning && sampling.maxOutputTokens !== undefined) body.max_tokens = sampling.maxOutputTokens;
  if (samples && family.temperature && sampling.temperature !== undefined) body.temperature = sampling.temperature;
  if (samples && sampling.topP !== undefined) body.top_p = sampling.topP;
  if (family.reasoning && sampling.maxOutputTokens !== undefined) body.max_completion_tokens = sampling.maxOutputTokens;
  if (effortNone) body.reasoning_effort = "none";
  body.messages = chatMessages(messages, wire, family.reasoning ? "developer" : "system");
  if (wireTools !== undefined) body.tools = wireTools;
  body.stream = true;
  body.stream_options = { include_usage: true };
  return {
    url: `${model.baseUrl.replace(/\/$/, "")}/chat/completions`,
    headers: wireHeaders("openai-completions", { authorization: `Bearer ${model.apiKey}` }),
    body: JSON.stringify(body),
  };
}

/** Tool definitions per tools array and wire names (a /chat call sends the same array every round); null: the SDK's to fail. */
function toolDefinitions(tools: readonly ModelTool[], wire: (name: string) => string): unknown[] | null {
  const names = tools.map((t) => wire(t.name));
  const hit = definitions.get(tools);
  if (hit && hit.names.length === names.length && hit.names.every((n, i) => n === names[i])) return hit.out;
  const schemas = tools.map((tool) => openAIToolSchema(tool.parameters));
  const out = schemas.includes(null)
    ? null
    : tools.map((tool, i) => ({ type: "function", function: { name: names[i], description: tool.description, parameters: schemas[i] } }));
  definitions.set(tools, { names, out });
  return out;
}
const definitions = new WeakMap<readonly ModelTool[], { names: string[]; out: unknown[] | null }>();

/** convertToOpenAIChatMessages for our messages (to-language-model-prompt.ts has the same rules for the SDK path). */
function chatMessages(messages: readonly ModelMessage[], wire: (name: string) => string, systemRole: "system" | "developer"): unknown[] {
  const out: unknown[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "system":
        out.push({ role: systemRole, content: m.content });
        break;
      case "user":
        out.push({ role: "user", content: m.content });
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
