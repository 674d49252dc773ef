import type { ModelTool } from "../turns";
import { isPlainObject } from "./to-language-model-prompt";
import type { ModelMessage, ResolvedModel, Sampling } from "./types";
import { jsonWithRaw, wireHeaders, type ErrorMessageOf, type WireRequest } from "./lean-wire";
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
  const head: Record<string, unknown> = { model: model.wireModel };
  if (!family.reasoning && sampling.maxOutputTokens !== undefined) head.max_tokens = sampling.maxOutputTokens;
  if (samples && family.temperature && sampling.temperature !== undefined) head.temperature = sampling.temperature;
  if (samples && sampling.topP !== undefined) head.top_p = sampling.topP;
  if (family.reasoning && sampling.maxOutputTokens !== undefined) head.max_completion_tokens = sampling.maxOutputTokens;
  if (effortNone) head.reasoning_effort = "none";
  // Earlier rounds' messages and the turn's tool definitions are sent as the text they were serialized to once.
  const body = jsonWithRaw(head, [
    ["messages", chatMessagesJson(messages, wire, family.reasoning ? "developer" : "system")],
    ["tools", wireTools?.json],
    ["stream", "true"],
    ["stream_options", STREAM_OPTIONS],
  ]);
  return {
    url: `${model.baseUrl.replace(/\/$/, "")}/chat/completions`,
    headers: wireHeaders("openai-completions", { authorization: `Bearer ${model.apiKey}` }),
    body,
  };
}

const STREAM_OPTIONS = JSON.stringify({ include_usage: true });

/**
 * Tool definitions as JSON text, per tools array and wire names (a /chat call sends the same array
 * every round: serialized once); null: the SDK's to fail.
 */
function toolDefinitions(tools: readonly ModelTool[], wire: (name: string) => string): { json: string } | null {
  const names = tools.map((t) => wire(t.name));
  const hit = definitions.get(tools);
  if (hit && hit.names.length === names.length && hit.names.every((n, i) => n === names[i])) return hit.out;
  const schemas = tools.map((tool) => openAIToolSchema(tool.parameters));
  const out = schemas.includes(null)
    ? null
    : {
        json: JSON.stringify(
          tools.map((tool, i) => ({ type: "function", function: { name: names[i], description: tool.description, parameters: schemas[i] } })),
        ),
      };
  definitions.set(tools, { names, out });
  return out;
}
const definitions = new WeakMap<readonly ModelTool[], { names: string[]; out: { json: string } | null }>();

/**
 * The messages as a JSON array, each message serialized once per way it is sent (the transcript
 * only grows, and a round sends all of it): what it depends on besides itself is its key (the
 * system role, or an assistant message's wire names).
 */
function chatMessagesJson(messages: readonly ModelMessage[], wire: (name: string) => string, systemRole: "system" | "developer"): string {
  const parts = messages.map((m) => {
    const key =
      m.role === "system" ? systemRole : m.role === "assistant" && m.toolCalls?.length ? JSON.stringify(m.toolCalls.map((c) => wire(c.name))) : "";
    const hit = serialized.get(m);
    if (hit?.key === key) return hit.json;
    const json = JSON.stringify(chatMessage(m, wire, systemRole));
    serialized.set(m, { key, json });
    return json;
  });
  return `[${parts.join(",")}]`;
}
const serialized = new WeakMap<ModelMessage, { key: string; json: string }>();

/** convertToOpenAIChatMessages for one of our messages (to-language-model-prompt.ts has the same rules for the SDK path). */
function chatMessage(m: ModelMessage, wire: (name: string) => string, systemRole: "system" | "developer"): unknown {
  switch (m.role) {
    case "system":
      return { role: systemRole, content: m.content };
    case "user":
      return { role: "user", content: m.content };
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
      return calls.length > 0 ? { role: "assistant", content: m.content || null, tool_calls: calls } : { role: "assistant", content: m.content };
    }
    case "tool":
      // No error flag on Chat Completions: a failed result is the loop's own text.
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  }
}

/** The message of a Chat Completions error body (the SDK's openaiErrorDataSchema, then `error.message`). */
export const chatCompletionsErrorMessage: ErrorMessageOf = (data) => {
  const error = isPlainObject(data) ? data.error : undefined;
  if (!isPlainObject(error) || typeof error.message !== "string") return undefined;
  if (error.type != null && typeof error.type !== "string") return undefined;
  if (error.code != null && typeof error.code !== "string" && typeof error.code !== "number") return undefined;
  return error.message;
};
