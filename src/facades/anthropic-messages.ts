import type { ChatMeta } from "../agent";
import { parseJsonBody, readBodyText } from "../http";
import {
  chatFailure,
  runHeaders,
  settle,
  sseBody,
  startFacadeTurn,
  stoppedAt,
  type FacadeOutcome,
  type FacadeRequestContext,
  type FacadeTurnRequest,
  type HistoryItem,
} from "./facade-session";
import { fail, isObject, samplingFields, streamFlag } from "./facade-input";
import { anthropicErrorBody } from "./facade-errors";

/**
 * `POST /v1/messages` in the Anthropic Messages format: the agent loop behind an Anthropic client.
 * The answer is the final assistant message, or the `tool_use` blocks of the client tools a cell
 * is waiting on (`stop_reason: "tool_use"`); `usage` is the whole turn's.
 */

/** Text blocks' text; `what` names the block types the place also takes (handled by the caller). */
function blocks(v: unknown, param: string): Array<Record<string, unknown>> {
  if (typeof v === "string") return [{ type: "text", text: v }];
  if (!Array.isArray(v)) return fail(param, `${param} must be a string or an array of content blocks`);
  return v.map((b, i) => (isObject(b) && typeof b.type === "string" ? b : fail(`${param}[${i}]`, `${param}[${i}] must be a content block`)));
}

function textOf(bs: Array<Record<string, unknown>>, param: string): string {
  return bs
    .map((b, i) =>
      b.type === "text" && typeof b.text === "string"
        ? b.text
        : fail(`${param}[${i}]`, `${param}[${i}]: only text blocks are supported here (got ${String(b.type)})`),
    )
    .join("");
}

function history(system: unknown, messages: unknown): HistoryItem[] {
  const out: HistoryItem[] = [];
  if (system !== undefined) out.push({ kind: "text", role: "system", content: textOf(blocks(system, "system"), "system"), source: "system" });
  if (!Array.isArray(messages) || messages.length === 0) fail("messages", "messages must be a non-empty array");
  (messages as unknown[]).forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m) || (m.role !== "user" && m.role !== "assistant")) return fail(at, `${at} must be { role: "user" | "assistant", content }`);
    const content = blocks(m.content, `${at}.content`);
    if (m.role === "assistant") {
      const uses = content.filter((b) => b.type === "tool_use");
      const said = textOf(
        content.filter((b) => b.type !== "tool_use"),
        `${at}.content`,
      );
      if (uses.length === 0) out.push({ kind: "text", role: "assistant", content: said, source: at });
      else
        out.push({
          kind: "calls",
          content: said,
          source: at,
          calls: uses.map((u, j) =>
            typeof u.id === "string" && typeof u.name === "string"
              ? { id: u.id, name: u.name, input: u.input ?? {} }
              : fail(`${at}.content[${j}]`, `${at}.content[${j}] must be { type: "tool_use", id, name, input }`),
          ),
        });
      return;
    }
    const results = content.filter((b) => b.type === "tool_result");
    if (results.length > 0) {
      if (out.at(-1)?.kind !== "calls") fail(at, `${at}: tool_result blocks must answer the assistant message's tool_use blocks`);
      out.push({
        kind: "results",
        source: at,
        results: results.map((r, j) => {
          const p = `${at}.content[${j}]`;
          if (typeof r.tool_use_id !== "string") fail(`${p}.tool_use_id`, `${p}.tool_use_id must be the id of the tool_use it answers`);
          const text = r.content === undefined ? "" : textOf(blocks(r.content, `${p}.content`), `${p}.content`);
          return { id: r.tool_use_id as string, content: text, isError: r.is_error === true };
        }),
      });
    }
    const rest = content.filter((b) => b.type !== "tool_result");
    // Text beside tool results is a new user message: the conversation goes on in a new turn.
    if (rest.length > 0 || results.length === 0) out.push({ kind: "text", role: "user", content: textOf(rest, `${at}.content`), source: at });
  });
  return out;
}

/** `tools: [{ name, description, input_schema }]` as client tools (server tools are not supported). */
function clientTools(tools: unknown): unknown[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) return fail("tools", "tools must be an array");
  return tools.map((t, i) => {
    if (!isObject(t) || (t.type !== undefined && t.type !== "custom"))
      fail(`tools[${i}]`, `tools[${i}] must be a custom tool { name, description, input_schema }`);
    const { name, description, input_schema } = t as Record<string, unknown>;
    return { name, ...(description !== undefined ? { description } : {}), ...(input_schema !== undefined ? { input_schema } : {}) };
  });
}

export type ParsedMessages = { turn: FacadeTurnRequest; stream: boolean };

export function parseMessages(body: unknown): ParsedMessages {
  if (!isObject(body)) fail("", "the body must be a JSON object");
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model === "") fail("model", 'model is required: a "provider/model" GET /v1/models lists');
  const sampling = samplingFields(b, ["max_tokens"]);
  return {
    turn: {
      format: "anthropic",
      model: b.model as string,
      history: history(b.system, b.messages),
      clientTools: clientTools(b.tools),
      sampling,
      resultsParam: "messages",
    },
    stream: streamFlag(b),
  };
}

function usage(meta: ChatMeta) {
  return {
    input_tokens: meta.usage.inputTokens,
    output_tokens: meta.usage.outputTokens,
    cache_creation_input_tokens: meta.usage.cacheWriteTokens,
    cache_read_input_tokens: meta.usage.cacheReadTokens,
  };
}

const STOP = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens" } as const;

function toolUses(outcome: FacadeOutcome) {
  if (outcome.kind !== "calls") return [];
  return outcome.calls.map((c) => ({ type: "tool_use" as const, id: c.callId, name: c.tool, input: c.input ?? {} }));
}

export async function messages(req: Request, ctx: FacadeRequestContext): Promise<Response> {
  const parsed = parseMessages(parseJsonBody(await readBodyText(() => req.text())));
  const run = await startFacadeTurn(ctx, parsed.turn, req.headers.get("x-session-id") ?? undefined, req.signal);
  const id = `msg_${ctx.requestId.replace(/[^A-Za-z0-9]/g, "")}`;
  const model = parsed.turn.model;
  const headers = runHeaders(run);
  if (!parsed.stream) {
    const outcome = await settle(run);
    if (outcome.kind === "error") throw chatFailure(outcome.error);
    const content = outcome.kind === "answer" ? [{ type: "text", text: outcome.text }] : toolUses(outcome);
    return Response.json(
      {
        id,
        type: "message",
        role: "assistant",
        model,
        content,
        stop_reason: STOP[stoppedAt(outcome)],
        stop_sequence: null,
        usage: usage(outcome.meta),
      },
      { headers },
    );
  }
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const body = sseBody(async (send) => {
    const start = { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null };
    send(event("message_start", { message: { ...start, usage: { input_tokens: 0, output_tokens: 0 } } }));
    let index = 0;
    let textOpen = false;
    for await (const e of run.events) {
      if (e.type === "text") {
        if (!textOpen) send(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
        textOpen = true;
        send(event("content_block_delta", { index, delta: { type: "text_delta", text: e.delta } }));
        continue;
      }
      if (textOpen) send(event("content_block_stop", { index: index++ }));
      const outcome = e.outcome;
      if (outcome.kind === "error") {
        const failure = chatFailure(outcome.error);
        send(event("error", { error: anthropicErrorBody(failure.code, failure.message).error }));
        return;
      }
      if (outcome.kind === "answer" && !textOpen) {
        // An empty final answer is still one text block, as the API sends it.
        send(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
        send(event("content_block_stop", { index: index++ }));
      }
      for (const use of toolUses(outcome)) {
        send(event("content_block_start", { index, content_block: { ...use, input: {} } }));
        send(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(use.input) } }));
        send(event("content_block_stop", { index: index++ }));
      }
      send(event("message_delta", { delta: { stop_reason: STOP[stoppedAt(outcome)], stop_sequence: null }, usage: usage(outcome.meta) }));
      send(event("message_stop", {}));
      return;
    }
  });
  return new Response(body, { headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
}
