// Request validation of the fake provider server (test/support/fake-providers.mjs): the rules the
// real APIs enforce that an adapter can get wrong, one problem string per violation, each naming
// where it is (`messages[3].tool_call_id`, `tools[0].function.parameters.properties.x`).

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const COMBINATORS = ["oneOf", "anyOf", "allOf"];

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const isPositiveInteger = (v) => Number.isSafeInteger(v) && v > 0;

/**
 * A tool's parameter schema must be valid for both vendors: an object schema at the top, flat (no
 * `oneOf`/`anyOf`/`allOf` at any depth; the "flat enums, no oneOf/anyOf").
 */
export function schemaProblems(schema, path) {
  if (!isObject(schema)) return [`${path} must be a JSON schema object`];
  const problems = [];
  if (schema.type !== "object") problems.push(`${path}.type must be "object" at the top of a tool schema`);
  const walk = (value, at) => {
    if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${at}[${i}]`));
    if (!isObject(value)) return;
    for (const [key, child] of Object.entries(value)) {
      if (COMBINATORS.includes(key)) problems.push(`${at}.${key} is not allowed in a tool schema (flat schemas only)`);
      walk(child, `${at}.${key}`);
    }
  };
  walk(schema, path);
  return problems;
}

function toolNameProblems(name, path, seen) {
  if (typeof name !== "string" || !TOOL_NAME.test(name)) return [`${path} must match ${TOOL_NAME} (got ${JSON.stringify(name)})`];
  if (seen.has(name)) return [`${path} duplicates tool name ${JSON.stringify(name)}`];
  seen.add(name);
  return [];
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (isObject(part) && typeof part.text === "string" ? part.text : "")).join("");
  return "";
}

/** `temperature` (0 to `maxTemperature`: 2 on Chat Completions, 1 on Messages) and `top_p` (over 0, at most 1). */
function samplingProblems(body, maxTemperature) {
  const problems = [];
  const t = body.temperature;
  if (t !== undefined && (typeof t !== "number" || t < 0 || t > maxTemperature))
    problems.push(`temperature must be a number from 0 to ${maxTemperature}`);
  const p = body.top_p;
  if (p !== undefined && (typeof p !== "number" || p <= 0 || p > 1)) problems.push("top_p must be a number over 0 and at most 1");
  return problems;
}

// ---------------------------------------------------------------- OpenAI Chat Completions

/** The text of the first user message (where a test's `[script:<id>]` marker lives). */
export function openaiFirstUserText(body) {
  const first = Array.isArray(body?.messages) ? body.messages.find((m) => isObject(m) && m.role === "user") : undefined;
  return first ? textOf(first.content) : "";
}

export function validateOpenAI(body) {
  const problems = [];
  if (!isObject(body)) return ["the body must be a JSON object"];
  if (typeof body.model !== "string" || body.model === "") problems.push("model must be a non-empty string");
  if (body.stream !== undefined && typeof body.stream !== "boolean") problems.push("stream must be a boolean");
  for (const key of ["max_tokens", "max_completion_tokens"]) {
    if (body[key] !== undefined && body[key] !== null && !isPositiveInteger(body[key])) problems.push(`${key} must be a positive integer`);
  }
  problems.push(...samplingProblems(body, 2));
  problems.push(...openaiToolProblems(body.tools));
  problems.push(...openaiMessageProblems(body.messages));
  return problems;
}

function openaiToolProblems(tools) {
  if (tools === undefined) return [];
  if (!Array.isArray(tools) || tools.length === 0) return ["tools must be a non-empty array when present"];
  const problems = [];
  const seen = new Set();
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool) || tool.type !== "function" || !isObject(tool.function)) {
      problems.push(`${at} must be { type: "function", function: { name, description, parameters } }`);
      return;
    }
    problems.push(...toolNameProblems(tool.function.name, `${at}.function.name`, seen));
    if (tool.function.description !== undefined && typeof tool.function.description !== "string") {
      problems.push(`${at}.function.description must be a string`);
    }
    problems.push(...schemaProblems(tool.function.parameters, `${at}.function.parameters`));
  });
  return problems;
}

function openaiMessageProblems(messages) {
  if (!Array.isArray(messages) || messages.length === 0) return ["messages must be a non-empty array"];
  const problems = [];
  let pending = new Set(); // tool call ids of the last assistant message not answered yet
  let answerable = new Set(); // every id of that assistant message
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) return problems.push(`${at} must be an object`);
    if (m.role !== "tool" && pending.size > 0) {
      problems.push(`${at} (${m.role}) comes before tool call(s) ${[...pending].join(", ")} were answered by role "tool" messages`);
      pending = new Set();
    }
    switch (m.role) {
      case "system":
      case "developer":
      case "user":
        if (typeof m.content !== "string" && !Array.isArray(m.content)) problems.push(`${at}.content must be a string or an array of parts`);
        answerable = new Set();
        break;
      case "assistant": {
        const calls = m.tool_calls ?? [];
        if (!Array.isArray(calls)) problems.push(`${at}.tool_calls must be an array`);
        const hasText = typeof m.content === "string" || Array.isArray(m.content);
        if (!hasText && (!Array.isArray(calls) || calls.length === 0)) problems.push(`${at} must have content or tool_calls`);
        answerable = new Set();
        (Array.isArray(calls) ? calls : []).forEach((call, j) => {
          const c = `${at}.tool_calls[${j}]`;
          if (!isObject(call) || typeof call.id !== "string" || call.id === "") return problems.push(`${c}.id must be a non-empty string`);
          if (call.type !== "function") problems.push(`${c}.type must be "function"`);
          if (!isObject(call.function) || typeof call.function.name !== "string") problems.push(`${c}.function.name must be a string`);
          else if (typeof call.function.arguments !== "string") problems.push(`${c}.function.arguments must be a JSON string`);
          if (answerable.has(call.id)) problems.push(`${c}.id duplicates ${call.id}`);
          answerable.add(call.id);
        });
        pending = new Set(answerable);
        break;
      }
      case "tool":
        if (typeof m.tool_call_id !== "string") {
          problems.push(`${at}.tool_call_id must be a string`);
        } else if (!answerable.has(m.tool_call_id)) {
          problems.push(`${at}.tool_call_id ${JSON.stringify(m.tool_call_id)} answers no tool call of the preceding assistant message`);
        } else if (!pending.delete(m.tool_call_id)) {
          problems.push(`${at}.tool_call_id ${JSON.stringify(m.tool_call_id)} was already answered`);
        }
        if (typeof m.content !== "string" && !Array.isArray(m.content)) problems.push(`${at}.content must be a string or an array of text parts`);
        break;
      default:
        problems.push(`${at}.role ${JSON.stringify(m.role)} is not one of system, developer, user, assistant, tool`);
    }
  });
  if (pending.size > 0) problems.push(`tool call(s) ${[...pending].join(", ")} of the last assistant message are never answered`);
  return problems;
}

// ---------------------------------------------------------------- Anthropic Messages

export function anthropicFirstUserText(body) {
  const first = Array.isArray(body?.messages) ? body.messages[0] : undefined;
  return isObject(first) && first.role === "user" ? textOf(first.content) : "";
}

export function validateAnthropic(body) {
  const problems = [];
  if (!isObject(body)) return ["the body must be a JSON object"];
  if (typeof body.model !== "string" || body.model === "") problems.push("model must be a non-empty string");
  if (!isPositiveInteger(body.max_tokens)) problems.push("max_tokens: field required (a positive integer)");
  if (body.stream !== undefined && typeof body.stream !== "boolean") problems.push("stream must be a boolean");
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system)) {
    problems.push("system must be a string or an array of text blocks");
  }
  problems.push(...samplingProblems(body, 1));
  problems.push(...anthropicToolProblems(body.tools));
  problems.push(...anthropicMessageProblems(body.messages));
  return problems;
}

function anthropicToolProblems(tools) {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return ["tools must be an array"];
  const problems = [];
  const seen = new Set();
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) return problems.push(`${at} must be { name, description, input_schema }`);
    if (tool.type !== undefined && tool.type !== "custom") return problems.push(`${at}.type ${JSON.stringify(tool.type)} is not a custom tool`);
    problems.push(...toolNameProblems(tool.name, `${at}.name`, seen));
    if (tool.description !== undefined && typeof tool.description !== "string") problems.push(`${at}.description must be a string`);
    problems.push(...schemaProblems(tool.input_schema, `${at}.input_schema`));
  });
  return problems;
}

function anthropicMessageProblems(messages) {
  if (!Array.isArray(messages) || messages.length === 0) return ["messages must be a non-empty array"];
  const problems = [];
  let previousToolUses = new Set(); // tool_use ids of the previous assistant message
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) return problems.push(`${at} must be an object`);
    const expected = i % 2 === 0 ? "user" : "assistant";
    if (m.role !== expected) problems.push(`${at}.role must be "${expected}": roles alternate user/assistant, starting with user`);
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (!Array.isArray(blocks) || blocks.length === 0) {
      problems.push(`${at}.content must be a string or a non-empty array of blocks`);
      previousToolUses = new Set();
      return;
    }
    const toolUses = new Set();
    const answered = new Set();
    blocks.forEach((block, j) => {
      const b = `${at}.content[${j}]`;
      if (!isObject(block)) return problems.push(`${b} must be a block object`);
      switch (block.type) {
        case "text":
          if (typeof block.text !== "string" || block.text === "") problems.push(`${b}.text must be a non-empty string`);
          break;
        case "tool_use":
          if (m.role !== "assistant") problems.push(`${b}: tool_use blocks belong to assistant messages`);
          if (typeof block.id !== "string" || block.id === "") problems.push(`${b}.id must be a non-empty string`);
          if (typeof block.name !== "string") problems.push(`${b}.name must be a string`);
          if (!isObject(block.input)) problems.push(`${b}.input must be an object`);
          if (toolUses.has(block.id)) problems.push(`${b}.id duplicates ${block.id}`);
          toolUses.add(block.id);
          break;
        case "tool_result":
          if (m.role !== "user") problems.push(`${b}: tool_result blocks belong to user messages`);
          if (!previousToolUses.has(block.tool_use_id)) {
            problems.push(`${b}.tool_use_id ${JSON.stringify(block.tool_use_id)} does not match a tool_use block of the previous assistant message`);
          } else if (answered.has(block.tool_use_id)) {
            problems.push(`${b}.tool_use_id ${JSON.stringify(block.tool_use_id)} is answered twice`);
          }
          answered.add(block.tool_use_id);
          if (block.is_error !== undefined && typeof block.is_error !== "boolean") problems.push(`${b}.is_error must be a boolean`);
          if (block.content !== undefined && typeof block.content !== "string" && !Array.isArray(block.content)) {
            problems.push(`${b}.content must be a string or an array of blocks`);
          }
          break;
        default:
          problems.push(`${b}.type ${JSON.stringify(block.type)} is not text, tool_use or tool_result`);
      }
    });
    if (m.role === "user" && previousToolUses.size > 0) {
      const missing = [...previousToolUses].filter((id) => !answered.has(id));
      if (missing.length > 0) problems.push(`${at}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(", ")}`);
    }
    previousToolUses = m.role === "assistant" ? toolUses : new Set();
  });
  return problems;
}
