import type {
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolCallPart,
  LanguageModelV4ToolResultPart,
} from "@ai-sdk/provider";
import type { JSONSchema7 } from "@ai-sdk/provider";
import type { ProviderApi } from "../config";
import type { ModelTool } from "../turns";
import type { ModelMessage, ModelToolCall } from "./types";

/**
 * The loop's conversation in the AI SDK's provider-neutral prompt (LanguageModelV4), which each wire
 * format's kept client maps to its own messages: OpenAI `role: "tool"` messages with `tool_call_id`;
 * Anthropic top-level `system` and `tool_result` blocks (`is_error` for failed results) merged with
 * neighbouring tool results into one user message, as the Messages API requires.
 *
 * A result's `content` reaches the model exactly as the loop wrote it: Chat Completions has no error
 * flag on tool messages (the SDK would wrap an error result as `{"error":…}`), so there a failed
 * result is plain text; the Messages API flags it with `is_error`.
 */
export function toLanguageModelPrompt(
  messages: readonly ModelMessage[],
  api: ProviderApi,
  wire: (name: string) => string = (name) => name,
): LanguageModelV4Prompt {
  const flagsErrors = api === "anthropic-messages";
  const prompt: LanguageModelV4Prompt = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        prompt.push({ role: "system", content: message.content });
        break;
      case "user":
        prompt.push({ role: "user", content: [{ type: "text", text: message.content }] });
        break;
      case "assistant": {
        const content: Extract<LanguageModelV4Message, { role: "assistant" }>["content"] = [];
        if (message.content !== "") content.push({ type: "text", text: message.content });
        for (const call of message.toolCalls ?? []) content.push(toolCallPart(call, wire));
        prompt.push({ role: "assistant", content });
        break;
      }
      case "tool": {
        const part: LanguageModelV4ToolResultPart = {
          type: "tool-result",
          toolCallId: message.toolCallId,
          toolName: wire(message.toolName),
          output: message.isError && flagsErrors ? { type: "error-text", value: message.content } : { type: "text", value: message.content },
        };
        const last = prompt.at(-1);
        if (last?.role === "tool") last.content.push(part);
        else prompt.push({ role: "tool", content: [part] });
        break;
      }
    }
  }
  return prompt;
}

/**
 * A call is replayed with the arguments it parsed to. Arguments that never parsed to an object
 * (`inputError`) are replayed as `{}`: the Messages API accepts only an object there, and the
 * call's tool result already tells the model what was wrong with what it wrote.
 */
function toolCallPart(call: ModelToolCall, wire: (name: string) => string): LanguageModelV4ToolCallPart {
  const input = call.inputError === undefined && isPlainObject(call.input) ? call.input : {};
  return { type: "tool-call", toolCallId: call.id, toolName: wire(call.name), input };
}

/** Tool definitions, names as `wire` gives them (wire-names.ts: what providers accept). */
export function toLanguageModelTools(tools: readonly ModelTool[], wire: (name: string) => string = (name) => name): LanguageModelV4FunctionTool[] {
  const names = tools.map((tool) => wire(tool.name));
  // A /chat call sends the same tools (one array) on every model round trip: converted once.
  const hit = converted.get(tools);
  if (hit && hit.length === names.length && hit.every((t, i) => t.name === names[i])) return hit;
  const out = tools.map((tool, i): LanguageModelV4FunctionTool => ({
    type: "function",
    name: names[i]!,
    description: tool.description,
    inputSchema: tool.parameters as JSONSchema7,
  }));
  converted.set(tools, out);
  return out;
}

/** Converted definitions per tools array (the wire client only reads them). */
const converted = new WeakMap<readonly ModelTool[], LanguageModelV4FunctionTool[]>();

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
