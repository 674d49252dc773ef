import type { ModelTool } from "../turns";
import { isPlainObject } from "./to-language-model-prompt";
import type { ModelMessage, ResolvedModel, Sampling } from "./types";
import { jsonWithRaw, wireHeaders, type ErrorMessageOf, type WireRequest } from "./lean-wire";
import { messagesFamilyRules } from "./anthropic-model-family";

/**
 * The Messages request the AI SDK's Anthropic model sends for one of our calls (issue 22, "a thin
 * turn"), built directly: the same URL, headers and JSON text, key for key, without its option
 * parsing, model-catalog lookup and prompt conversion. The SDK's rules as our inputs reach them:
 * - temperature clamped to [0, 1]; no temperature or top_p for the models that refuse sampling
 *   settings; top_p dropped beside a temperature for Claude ids (anthropic-model-family.ts);
 * - `max_tokens` always (ours, else the family's ceiling), capped at the ceiling for known ids;
 * - system messages: the first run of them is the top-level `system` (text blocks), a later one a
 *   `system` message with the `mid-conversation-system-2026-04-07` beta;
 * - consecutive user and tool messages merged into one user message (`tool_result` blocks with
 *   `is_error` for failed results), consecutive assistant messages into one whose `tool_use`
 *   blocks follow its text; an assistant turn with nothing in it left out; the last text of a
 *   conversation that ends with the assistant trimmed;
 * - tools with no `eager_input_streaming` (WIRE_OPTIONS in create-model-client.ts), and the
 *   `structured-outputs-2025-11-13` beta beside them for models with native structured output.
 * test/unit/providers/lean-messages-request.test.ts sends a corpus of calls both ways and requires
 * identical requests and failures. `undefined` (a blank base URL, which the SDK refuses before
 * sending) leaves the call to the SDK.
 */
export function messagesRequest(
  model: ResolvedModel,
  messages: readonly ModelMessage[],
  tools: readonly ModelTool[],
  sampling: Sampling,
  wire: (name: string) => string,
): WireRequest | undefined {
  if (model.baseUrl.trim() === "") return undefined;
  const family = messagesFamilyRules(model.wireModel);
  let temperature = sampling.temperature === undefined ? undefined : Math.min(1, Math.max(0, sampling.temperature));
  let topP = sampling.topP;
  if (!family.sampling) temperature = topP = undefined;
  if ((family.known || model.wireModel.includes("claude-")) && temperature !== undefined) topP = undefined;
  const maxTokens = sampling.maxOutputTokens ?? family.maxOutputTokens;
  const betas = new Set<string>();
  const prompt = messagesPrompt(messages, wire, betas);
  if (tools.length > 0 && family.structuredOutput) betas.add("structured-outputs-2025-11-13");
  // Key order is prepareRequest's (baseArgs, then tools, then stream); absent fields are left out as JSON.stringify leaves out undefined.
  // The turn's tool definitions are sent as the text they were serialized to once.
  const body = jsonWithRaw(
    {
      model: model.wireModel,
      max_tokens: family.known ? Math.min(maxTokens, family.maxOutputTokens) : maxTokens,
      temperature,
      top_p: topP,
      system: prompt.system,
      messages: prompt.messages,
    },
    [
      ["tools", tools.length > 0 ? toolDefinitions(tools, wire) : undefined],
      ["stream", "true"],
    ],
  );
  const base = model.baseUrl.replace(/\/$/, "");
  const own: Record<string, string> = { "anthropic-version": "2023-06-01", "x-api-key": model.apiKey };
  if (betas.size > 0) own["anthropic-beta"] = [...betas].join(",");
  return {
    // The SDK adds the API version to the bare Anthropic origin.
    url: `${base === "https://api.anthropic.com" ? `${base}/v1` : base}/messages`,
    headers: wireHeaders("anthropic-messages", own),
    body,
  };
}

/** Tool definitions as JSON text, per tools array and wire names (a /chat call sends the same array every round: serialized once). */
function toolDefinitions(tools: readonly ModelTool[], wire: (name: string) => string): string {
  const names = tools.map((t) => wire(t.name));
  const hit = definitions.get(tools);
  if (hit && hit.names.length === names.length && hit.names.every((n, i) => n === names[i])) return hit.json;
  const json = JSON.stringify(tools.map((tool, i) => ({ name: names[i], description: tool.description, input_schema: tool.parameters })));
  definitions.set(tools, { names, json });
  return json;
}
const definitions = new WeakMap<readonly ModelTool[], { names: string[]; json: string }>();

type Block = Record<string, unknown>;
type Turn = { role: "system" | "user" | "assistant"; content: Block[] };

/** convertToAnthropicPrompt for our messages, grouped as its groupIntoBlocks groups them (tool results go with users). */
function messagesPrompt(messages: readonly ModelMessage[], wire: (name: string) => string, betas: Set<string>) {
  const groups: Array<{ kind: "system" | "user" | "assistant"; messages: ModelMessage[] }> = [];
  for (const m of messages) {
    const kind = m.role === "tool" ? "user" : m.role;
    const last = groups.at(-1);
    if (last?.kind === kind) last.messages.push(m);
    else groups.push({ kind, messages: [m] });
  }
  let system: Block[] | undefined;
  const out: Turn[] = [];
  groups.forEach((group, i) => {
    if (group.kind === "system") {
      const texts = group.messages.map((m) => ({ type: "text", text: m.content }));
      if (system === undefined) system = texts;
      else {
        betas.add("mid-conversation-system-2026-04-07");
        for (const text of texts) out.push({ role: "system", content: [text] });
      }
    } else if (group.kind === "user") {
      out.push({ role: "user", content: group.messages.map(userBlock) });
    } else {
      const isLastGroup = i === groups.length - 1;
      const texts: Block[] = [];
      const uses: Block[] = [];
      group.messages.forEach((m, j) => {
        if (m.role !== "assistant") return;
        const calls = m.toolCalls ?? [];
        // Only the very last part of a conversation ending with the assistant is trimmed (a prefill may not end in whitespace).
        if (m.content !== "")
          texts.push({ type: "text", text: isLastGroup && j === group.messages.length - 1 && calls.length === 0 ? m.content.trim() : m.content });
        for (const call of calls)
          // Arguments that never parsed to an object are replayed as {} (toolCallPart).
          uses.push({
            type: "tool_use",
            id: call.id,
            name: wire(call.name),
            input: call.inputError === undefined && isPlainObject(call.input) ? call.input : {},
          });
      });
      // Text first, then the tool uses (moveToolUseBlocksToEnd); a turn with neither is not sent.
      if (texts.length + uses.length > 0) out.push({ role: "assistant", content: [...texts, ...uses] });
    }
  });
  return { system, messages: out };
}

function userBlock(m: ModelMessage): Block {
  if (m.role === "tool") return { type: "tool_result", tool_use_id: m.toolCallId, content: m.content, is_error: m.isError ? true : undefined };
  return { type: "text", text: m.content };
}

/** The message of a Messages error body (the SDK's anthropicErrorDataSchema, then `error.message`). */
export const messagesErrorMessage: ErrorMessageOf = (data) => {
  const error = isPlainObject(data) && data.type === "error" ? data.error : undefined;
  if (!isPlainObject(error) || typeof error.type !== "string" || typeof error.message !== "string") return undefined;
  return error.message;
};
