import { jsonTooDeep } from "../bridge";
import { MAX_JSON_DEPTH } from "../limits";
import { isPlainObject } from "./to-language-model-prompt";
import type { ModelToolCall } from "./types";

/**
 * A streamed tool call with its argument text parsed. Arguments must be one JSON object; anything
 * else keeps the raw text as `input` and says why in `inputError`, so the loop can answer the model
 * with a tool error instead of calling the tool with garbage. No arguments at all (an empty string,
 * as some servers send for a tool without parameters) is `{}`.
 */
export function toModelToolCall(id: string, name: string, argumentsText: string): ModelToolCall {
  if (argumentsText.trim() === "") return { id, name, input: {} };
  // Model-controlled nesting: refused where it enters, like HTTP bodies (it would overflow later serialization).
  if (jsonTooDeep(argumentsText)) {
    return { id, name, input: "", inputError: `the arguments are nested deeper than ${MAX_JSON_DEPTH} levels` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsText);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { id, name, input: argumentsText, inputError: `the arguments are not valid JSON (${why})` };
  }
  if (!isPlainObject(parsed)) {
    return { id, name, input: argumentsText, inputError: `the arguments must be a JSON object, not ${describe(parsed)}` };
  }
  return { id, name, input: parsed };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
