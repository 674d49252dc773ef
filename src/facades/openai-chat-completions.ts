import type { ChatMeta } from "../agent";
import { addTokenCounts } from "../providers";
import { splitModelRef } from "../config";
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
import { openaiErrorBody } from "./facade-errors";

/**
 * `POST /v1/chat/completions` in the Chat Completions format: the agent loop behind an OpenAI
 * client. The client sees the final assistant message (code mode runs inside), or the client tool
 * calls a cell is waiting on as `tool_calls`; `usage` is the whole turn's.
 */

/** A message's text: a string, or `{ type: "text", text }` parts (other parts are not supported). */
function text(v: unknown, param: string, optional = false): string {
  if (typeof v === "string") return v;
  if ((v === null || v === undefined) && optional) return "";
  if (!Array.isArray(v)) return fail(param, `${param} must be a string or an array of text parts`);
  return v
    .map((p, i) =>
      isObject(p) && p.type === "text" && typeof p.text === "string"
        ? p.text
        : fail(`${param}[${i}]`, `${param}[${i}] must be { type: "text", text } (other content parts are not supported)`),
    )
    .join("");
}

function history(messages: unknown): HistoryItem[] {
  if (!Array.isArray(messages) || messages.length === 0) fail("messages", "messages must be a non-empty array");
  const out: HistoryItem[] = [];
  (messages as unknown[]).forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) fail(at, `${at} must be an object`);
    const msg = m as Record<string, unknown>;
    switch (msg.role) {
      case "system":
      case "developer":
        out.push({ kind: "text", role: "system", content: text(msg.content, `${at}.content`), source: at });
        return;
      case "user":
        out.push({ kind: "text", role: "user", content: text(msg.content, `${at}.content`), source: at });
        return;
      case "assistant": {
        const content = text(msg.content, `${at}.content`, true);
        const calls = msg.tool_calls;
        if (calls === undefined || calls === null || (Array.isArray(calls) && calls.length === 0)) {
          out.push({ kind: "text", role: "assistant", content, source: at });
          return;
        }
        if (!Array.isArray(calls)) fail(`${at}.tool_calls`, `${at}.tool_calls must be an array`);
        out.push({
          kind: "calls",
          content,
          source: at,
          calls: (calls as unknown[]).map((c, j) => {
            const p = `${at}.tool_calls[${j}]`;
            const fn = isObject(c) ? c.function : undefined;
            if (!isObject(c) || typeof c.id !== "string" || !isObject(fn) || typeof fn.name !== "string")
              fail(p, `${p} must be { id, type: "function", function: { name, arguments } }`);
            const args = (fn as Record<string, unknown>).arguments;
            let input: unknown = args;
            if (typeof args === "string") {
              try {
                input = JSON.parse(args);
              } catch {
                input = args;
              }
            }
            return { id: (c as { id: string }).id, name: (fn as { name: string }).name, input };
          }),
        });
        return;
      }
      case "tool": {
        if (typeof msg.tool_call_id !== "string") fail(`${at}.tool_call_id`, `${at}.tool_call_id must be the id of the tool call it answers`);
        const result = { id: msg.tool_call_id as string, content: text(msg.content, `${at}.content`), isError: false };
        const last = out.at(-1);
        if (last?.kind === "results") last.results.push(result);
        else if (last?.kind === "calls") out.push({ kind: "results", results: [result], source: at });
        else fail(at, `${at} (a tool result) must follow an assistant message with tool_calls`);
        return;
      }
      default:
        fail(`${at}.role`, `${at}.role must be "system", "developer", "user", "assistant" or "tool"`);
    }
  });
  return out;
}

/** `tools: [{ type: "function", function: { name, description, parameters } }]` as client tools. */
function clientTools(tools: unknown): unknown[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) return fail("tools", "tools must be an array");
  return tools.map((t, i) => {
    const fn = isObject(t) ? t.function : undefined;
    if (!isObject(t) || (t.type !== undefined && t.type !== "function") || !isObject(fn))
      fail(`tools[${i}]`, `tools[${i}] must be { type: "function", function: { name, description, parameters } }`);
    const { name, description, parameters } = fn as Record<string, unknown>;
    return { name, ...(description !== undefined ? { description } : {}), ...(parameters !== undefined ? { parameters } : {}) };
  });
}

export type ParsedCompletion = { turn: FacadeTurnRequest; stream: boolean; includeUsage: boolean };

export function parseChatCompletion(body: unknown): ParsedCompletion {
  if (!isObject(body)) fail("", "the body must be a JSON object");
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model === "") fail("model", 'model is required: a "provider/model" GET /v1/models lists');
  if (b.n !== undefined && b.n !== null && b.n !== 1) fail("n", "n must be 1 (one answer per turn)");
  const sampling = samplingFields(b, ["max_completion_tokens", "max_tokens"]);
  const options = b.stream_options;
  return {
    turn: {
      format: "openai",
      model: b.model as string,
      history: history(b.messages),
      clientTools: clientTools(b.tools),
      sampling,
      resultsParam: "messages",
    },
    stream: streamFlag(b),
    includeUsage: isObject(options) && options.include_usage === true,
  };
}

function usage(meta: ChatMeta) {
  // Sums saturate like the turn's own totals: a hostile provider's huge counts stay exact integers.
  const prompt = addTokenCounts(addTokenCounts(meta.usage.inputTokens, meta.usage.cacheReadTokens), meta.usage.cacheWriteTokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: meta.usage.outputTokens,
    total_tokens: addTokenCounts(prompt, meta.usage.outputTokens),
    prompt_tokens_details: { cached_tokens: meta.usage.cacheReadTokens },
  };
}

function toolCalls(outcome: FacadeOutcome) {
  if (outcome.kind !== "calls") return undefined;
  return outcome.calls.map((c) => ({
    id: c.callId,
    type: "function" as const,
    function: { name: c.tool, arguments: JSON.stringify(c.input ?? {}) },
  }));
}

export async function chatCompletions(req: Request, ctx: FacadeRequestContext): Promise<Response> {
  const parsed = parseChatCompletion(parseJsonBody(await readBodyText(() => req.text())));
  const run = await startFacadeTurn(ctx, parsed.turn, req.headers.get("x-session-id") ?? undefined, req.signal);
  const id = `chatcmpl-${ctx.requestId}`;
  const created = Math.floor(Date.now() / 1000);
  const model = parsed.turn.model;
  const headers = runHeaders(run);
  if (!parsed.stream) {
    const outcome = await settle(run);
    if (outcome.kind === "error") throw chatFailure(outcome.error);
    const calls = toolCalls(outcome);
    const message = {
      role: "assistant",
      content: outcome.kind === "answer" ? outcome.text : null,
      refusal: null,
      ...(calls ? { tool_calls: calls } : {}),
    };
    const body = {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message, finish_reason: stoppedAt(outcome), logprobs: null }],
      usage: usage(outcome.meta),
    };
    return Response.json(body, { headers });
  }
  const chunk = (delta: object, finish: string | null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
  const body = sseBody(async (send) => {
    send(data(chunk({ role: "assistant", content: "" }, null)));
    for await (const event of run.events) {
      if (event.type === "text") {
        send(data(chunk({ content: event.delta }, null)));
        continue;
      }
      const outcome = event.outcome;
      if (outcome.kind === "error") {
        // An error after the stream began: the OpenAI clients raise an `error` data event as an APIError.
        const failure = chatFailure(outcome.error);
        send(data(openaiErrorBody(failure.code, failure.message)));
        break;
      }
      const calls = toolCalls(outcome);
      if (calls) send(data(chunk({ tool_calls: calls.map((c, index) => ({ index, ...c })) }, null)));
      send(data(chunk({}, stoppedAt(outcome))));
      if (parsed.includeUsage) send(data({ id, object: "chat.completion.chunk", created, model, choices: [], usage: usage(outcome.meta) }));
      break;
    }
    send("data: [DONE]\n\n");
  });
  return new Response(body, { headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
}

/**
 * `GET /v1/models`, in the OpenAI list format: the `provider/model` ids a request can reach — those
 * of providers whose API-key secret is set in the Worker's environment (a model whose key is
 * missing would only answer an error) — and the `models.aliases` naming one of them.
 */
export function listModels(ctx: FacadeRequestContext): Response {
  const callable = (provider: string): boolean => {
    const ref = Object.hasOwn(ctx.config.providers, provider) ? ctx.config.providers[provider]!.apiKey : undefined;
    const name = ref?.startsWith("env:") ? ref.slice("env:".length) : undefined;
    const secret = name !== undefined && Object.hasOwn(ctx.env, name) ? ctx.env[name] : undefined;
    return typeof secret === "string" && secret !== "";
  };
  const entry = (id: string, provider: string) => ({ id, object: "model", created: 0, owned_by: provider });
  const models = Object.entries(ctx.config.providers).flatMap(([provider, catalog]) =>
    callable(provider) ? catalog.models.map((m) => entry(`${provider}/${m.id}`, provider)) : [],
  );
  const aliases = Object.entries(ctx.config.modelAliases).flatMap(([alias, target]) => {
    const provider = splitModelRef(target)!.provider;
    return callable(provider) ? [entry(alias, provider)] : [];
  });
  return Response.json({ object: "list", data: [...models, ...aliases] });
}
