import { jsonTooDeep } from "../bridge";
import { maskSentSecrets, maskSentSecretsIn } from "../observability";
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

/** Masks a provider-written tool call id: wire-safe (`[A-Za-z0-9_-]`, which every wire format accepts for ids). */
export const TOOL_CALL_ID_MASK = "___";

/**
 * A streamed tool call as it enters the gateway with every provider-written string masked: a
 * provider echoing its key (or another registered secret, `secrets` as sentSecretList gives them)
 * in a call's id or name as well as in its arguments.
 * - The id gets the wire-safe TOOL_CALL_ID_MASK: the call and its result are stored and replayed
 *   under the same masked id, so they still pair (ids repeated within a reply are made unique by
 *   the loop).
 * - The name gets MASK; a masked name never names a tool the request offered (`offered`): `_2`,
 *   `_3` … are appended until it names none, so the loop answers it as an unknown tool.
 * - The arguments text is masked before it is parsed (a parse error quoting it carries no
 *   secret), then every string and key of the parsed value (a secret spelled with JSON escapes).
 */
export function maskedToolCall(
  id: string,
  name: string,
  argumentsText: string,
  secrets: readonly string[],
  offered: ReadonlySet<string>,
): ModelToolCall {
  const maskedName = maskSentSecrets(name, secrets);
  let safeName = maskedName;
  if (maskedName !== name) for (let n = 2; offered.has(safeName); n++) safeName = `${maskedName}_${n}`;
  const call = toModelToolCall(maskSentSecrets(id, secrets, TOOL_CALL_ID_MASK), safeName, maskSentSecrets(argumentsText, secrets));
  if (typeof call.input === "string") return call;
  const input = maskSentSecretsIn(call.input, secrets);
  return input === call.input ? call : { ...call, input };
}
