// What the fake provider server sends: each vendor's error JSON, streamed answers (SSE exactly as
// the vendor frames them) and non-streamed answers, from one script step.

const OPENAI_ERROR_TYPES = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  403: "invalid_request_error",
  404: "invalid_request_error",
  429: "requests",
};
const ANTHROPIC_ERROR_TYPES = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

/** The vendor's error body for `status`. */
export function errorBody(wire, status, message) {
  if (wire === "openai") {
    const type = OPENAI_ERROR_TYPES[status] ?? (status >= 500 ? "server_error" : "invalid_request_error");
    const code = status === 401 ? "invalid_api_key" : status === 429 ? "rate_limit_exceeded" : null;
    return { error: { message, type, param: null, code } };
  }
  const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
  return { type: "error", error: { type, message }, request_id: `req_fake${Date.now().toString(36)}` };
}

/** The vendors' own words for a key they do not know. */
export function wrongKeyMessage(wire, key) {
  return wire === "openai"
    ? `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`
    : "invalid x-api-key";
}

const FINISH = {
  openai: { stop: "stop", "tool-calls": "tool_calls", length: "length", "content-filter": "content_filter" },
  anthropic: { stop: "end_turn", "tool-calls": "tool_use", length: "max_tokens", "content-filter": "refusal" },
};

/** A script step made concrete: text deltas, tool calls with ids and argument text, usage, finish. */
export function planAnswer(wire, step, ids) {
  const given = step.text === undefined ? [] : Array.isArray(step.text) ? step.text : [step.text];
  // A long answer made here, not sent in the script: `times` more deltas of `text` (a provider past a byte bound).
  const deltas = step.repeatText ? [...given, ...Array.from({ length: step.repeatText.times }, () => step.repeatText.text)] : given;
  const toolCalls = (step.toolCalls ?? []).map((call) => ({
    id: call.id ?? ids.next(wire === "openai" ? "call_" : "toolu_"),
    name: call.name,
    // A string is sent verbatim (a test of arguments that do not parse); anything else as JSON.
    argumentsText: typeof call.input === "string" ? call.input : JSON.stringify(call.input ?? {}),
  }));
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...step.usage };
  const neutral = step.finishReason ?? (toolCalls.length > 0 ? "tool-calls" : "stop");
  return { deltas, toolCalls, usage, rawUsage: step.rawUsage ?? {}, finishReason: FINISH[wire][neutral] ?? neutral };
}

/** `data: {json}` with one field's value sent as raw JSON text (a hostile provider's usage: `"12"`, `1e400`, `{}`). */
function withRawField(json, field, raw) {
  if (raw === undefined) return JSON.stringify(json);
  const text = JSON.stringify({ ...json, [field]: "__RAW__" });
  return text.replace('"__RAW__"', raw);
}

/** Argument text in small fragments, as vendors stream it (a JSON value split mid-token). */
export function fragments(text, size = 7) {
  const parts = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts.length > 0 ? parts : [""];
}

// ---------------------------------------------------------------- OpenAI

function openaiUsage(usage) {
  const out = {
    prompt_tokens: usage.input + usage.cacheRead + usage.cacheWrite,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.cacheRead + usage.cacheWrite + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  // OpenAI itself never reports cache writes; OpenAI-compatible resellers that bill them do, here.
  if (usage.cacheWrite > 0) out.prompt_tokens_details.cache_write_tokens = usage.cacheWrite;
  return out;
}

/** `data: {chunk}` events of a Chat Completions stream, ending with `data: [DONE]` (`upTo`: "text" stops after the text deltas). */
export function openaiEvents(plan, body, meta, upTo = "end") {
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (choices, usage, rawUsage) => {
    const c = { id: meta.id, object: "chat.completion.chunk", created: meta.created, model: body.model, system_fingerprint: "fp_fake", choices };
    if (includeUsage) c.usage = usage ?? null;
    return `data: ${includeUsage ? withRawField(c, "usage", rawUsage) : JSON.stringify(c)}\n\n`;
  };
  const delta = (d, finish = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const events = [delta({ role: "assistant", content: "", refusal: null })];
  for (const text of plan.deltas) events.push(delta({ content: text }));
  if (upTo === "text") return events;
  plan.toolCalls.forEach((call, index) => {
    events.push(delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const part of fragments(call.argumentsText)) events.push(delta({ tool_calls: [{ index, function: { arguments: part } }] }));
  });
  events.push(delta({}, plan.finishReason));
  if (includeUsage) events.push(chunk([], openaiUsage(plan.usage), plan.rawUsage.openai));
  events.push("data: [DONE]\n\n");
  return events;
}

/** A stream that breaks: `kind` "json" cuts an event mid-JSON, "shape" sends JSON of the wrong shape. */
export function openaiMalformedEvents(plan, body, meta, kind = "json") {
  const broken =
    kind === "shape"
      ? `data: ${JSON.stringify({ id: "chatcmpl-broken", object: "chat.completion.chunk", choices: [{ index: "zero", delta: { content: 12345 } }], raw: MALFORMED_MARKER })}\n\n`
      : `data: {"id":"chatcmpl-broken","raw":"${MALFORMED_MARKER}","choices":[{"index":0,"delta":{"content":\n\n`;
  return [...openaiEvents({ ...plan, deltas: plan.deltas.slice(0, 1) }, body, meta, "text"), broken];
}

/** Text inside every malformed event: a client must never see it (the gateway does not echo raw provider bytes). */
export const MALFORMED_MARKER = "RAW-PROVIDER-BYTES";

export function openaiJson(plan, body, meta) {
  const message = { role: "assistant", content: plan.deltas.length > 0 ? plan.deltas.join("") : null, refusal: null };
  if (plan.toolCalls.length > 0) {
    message.tool_calls = plan.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.argumentsText } }));
  }
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: body.model,
    system_fingerprint: "fp_fake",
    choices: [{ index: 0, message, logprobs: null, finish_reason: plan.finishReason }],
    usage: openaiUsage(plan.usage),
  };
}

// ---------------------------------------------------------------- Anthropic

const sse = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

function anthropicStart(plan, body, meta) {
  const usage = {
    input_tokens: plan.usage.input,
    cache_creation_input_tokens: plan.usage.cacheWrite,
    cache_read_input_tokens: plan.usage.cacheRead,
    output_tokens: 1,
  };
  const message = { id: meta.id, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage };
  const start =
    plan.rawUsage?.anthropicStart === undefined
      ? sse("message_start", { message })
      : `event: message_start\ndata: {"type":"message_start","message":${withRawField(message, "usage", plan.rawUsage.anthropicStart)}}\n\n`;
  return [start, sse("ping", {})];
}

/** `event:`/`data:` pairs of a Messages stream (`upTo`: "text" stops after the text deltas, its block left open). */
export function anthropicEvents(plan, body, meta, upTo = "end") {
  const events = anthropicStart(plan, body, meta);
  let index = 0;
  if (plan.deltas.length > 0) {
    events.push(sse("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const text of plan.deltas) events.push(sse("content_block_delta", { index, delta: { type: "text_delta", text } }));
    if (upTo === "text") return events;
    events.push(sse("content_block_stop", { index }));
    index++;
  }
  if (upTo === "text") return events;
  for (const call of plan.toolCalls) {
    events.push(sse("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }));
    events.push(sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } }));
    for (const part of fragments(call.argumentsText))
      events.push(sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } }));
    events.push(sse("content_block_stop", { index }));
    index++;
  }
  const delta = {
    type: "message_delta",
    delta: { stop_reason: plan.finishReason, stop_sequence: null },
    usage: { output_tokens: plan.usage.output },
  };
  events.push(`event: message_delta\ndata: ${withRawField(delta, "usage", plan.rawUsage?.anthropicDelta)}\n\n`);
  events.push(sse("message_stop", {}));
  return events;
}

export function anthropicMalformedEvents(plan, body, meta, kind = "json") {
  const broken =
    kind === "shape"
      ? sse("content_block_start", { index: "zero", content_block: { type: "text", text: 12345 }, raw: MALFORMED_MARKER })
      : `event: content_block_start\ndata: {"type":"content_block_start","raw":"${MALFORMED_MARKER}","index":0,"content_block":{"type":\n\n`;
  return [...anthropicStart(plan, body, meta), broken];
}

export function anthropicJson(plan, body, meta) {
  const content = [];
  if (plan.deltas.length > 0) content.push({ type: "text", text: plan.deltas.join("") });
  for (const call of plan.toolCalls) {
    let input;
    try {
      input = JSON.parse(call.argumentsText);
    } catch {
      input = call.argumentsText;
    }
    content.push({ type: "tool_use", id: call.id, name: call.name, input });
  }
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: body.model,
    content,
    stop_reason: plan.finishReason,
    stop_sequence: null,
    usage: {
      input_tokens: plan.usage.input,
      cache_creation_input_tokens: plan.usage.cacheWrite,
      cache_read_input_tokens: plan.usage.cacheRead,
      output_tokens: plan.usage.output,
    },
  };
}
