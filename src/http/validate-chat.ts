import type { ChatRequest } from "../session";
import type { Sampling } from "../providers";
import { DEFAULT_ASSISTANT_TURNS, MAX_ASSISTANT_TURNS, MAX_CHAT_MESSAGE_CHARS, MAX_CHAT_MESSAGES } from "../limits";
import { GatewayError } from "../errors";
import { validateOpenTurn } from "./validate-turn";

const CHAT_KEYS = new Set(["messages", "turnId", "maxAssistantTurns", "temperature", "topP", "maxOutputTokens"]);
/** The most output tokens a turn may ask for per model call (the model row's own maximum applies too). */
const MAX_OUTPUT_TOKENS = 1_000_000;
const ROLES = new Set(["system", "user", "assistant"]);
const TURN_ID = /^[A-Za-z0-9\-]{1,64}$/;

function fail(path: string, message: string): never {
  throw new GatewayError("invalid_request", message, path);
}

/** A message's content: a string, or an array of `{ type: "text", text }` parts (joined). */
function content(v: unknown, path: string): string {
  if (typeof v === "string") {
    if (v.length > MAX_CHAT_MESSAGE_CHARS) fail(path, `${path} is longer than ${MAX_CHAT_MESSAGE_CHARS} characters`);
    return v;
  }
  if (!Array.isArray(v)) fail(path, `${path} must be a string or an array of { type: "text", text } parts`);
  const parts = v.map((p, i) => {
    if (typeof p !== "object" || p === null || (p as { type?: unknown }).type !== "text" || typeof (p as { text?: unknown }).text !== "string")
      fail(`${path}[${i}]`, `${path}[${i}] must be { type: "text", text: string } (other part types are not supported)`);
    return (p as { text: string }).text;
  });
  return content(parts.join(""), path);
}

/** Providers refuse empty user/system turns: refused here with the path instead of a provider 502. */
function nonEmpty(text: string, path: string): string {
  if (text.trim() === "") fail(path, `${path} must not be empty`);
  return text;
}

/**
 * `POST …/chat`: a new turn (`messages` and `model`, plus every field of `POST …/turns`) or the
 * continuation of a turn that stopped on client tools (`turnId`; no messages: the turn's
 * transcript is the conversation).
 */
export function validateChat(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) fail("", "body must be a JSON object");
  const turn = validateOpenTurn(body, CHAT_KEYS);
  const b = body as Record<string, unknown>;
  const out: ChatRequest = { ...turn, messages: [], maxAssistantTurns: DEFAULT_ASSISTANT_TURNS };
  if (b.maxAssistantTurns !== undefined) {
    const n = b.maxAssistantTurns;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > MAX_ASSISTANT_TURNS)
      fail("maxAssistantTurns", `maxAssistantTurns must be an integer from 1 to ${MAX_ASSISTANT_TURNS}`);
    out.maxAssistantTurns = n;
  }
  if (b.turnId !== undefined) {
    if (typeof b.turnId !== "string" || !TURN_ID.test(b.turnId)) fail("turnId", "turnId must be the turnId of an earlier /chat answer");
    out.turnId = b.turnId;
    if (b.messages !== undefined && (!Array.isArray(b.messages) || b.messages.length > 0))
      fail("messages", "a continuation (turnId) takes no messages: post client results, then call /chat with the turnId");
    for (const key of [
      "agentId",
      "allow",
      "deny",
      "disableTools",
      "clientTools",
      "mcpServers",
      "senderId",
      "senderName",
      "channel",
      "temperature",
      "topP",
      "maxOutputTokens",
    ] as const)
      if (b[key] !== undefined) fail(key, `${key} belongs to the turn that was opened; a continuation (turnId) cannot change it`);
    return out;
  }
  if (turn.model === undefined) fail("model", 'model is required: "provider/model" from models.providers');
  const sampling = validateSampling(b);
  if (sampling) out.sampling = sampling;
  if (!Array.isArray(b.messages) || b.messages.length === 0) fail("messages", "messages must be a non-empty array of { role, content }");
  if (b.messages.length > MAX_CHAT_MESSAGES) fail("messages", `messages has more than ${MAX_CHAT_MESSAGES} entries`);
  out.messages = b.messages.map((m, i) => {
    const path = `messages[${i}]`;
    if (typeof m !== "object" || m === null || Array.isArray(m)) fail(path, `${path} must be { role, content }`);
    const msg = m as Record<string, unknown>;
    for (const key of Object.keys(msg)) if (key !== "role" && key !== "content") fail(`${path}.${key}`, `unknown field ${key}`);
    if (typeof msg.role !== "string" || !ROLES.has(msg.role))
      fail(`${path}.role`, `${path}.role must be "system", "user" or "assistant" (tool results arrive through client-results)`);
    return { role: msg.role as "system" | "user" | "assistant", content: nonEmpty(content(msg.content, `${path}.content`), `${path}.content`) };
  });
  if (!out.messages.some((m) => m.role === "user")) fail("messages", "messages must contain at least one user message");
  return out;
}

/**
 * `temperature` (0–2; the Messages API takes 0–1, checked once the model is known), `topP` (over 0,
 * at most 1) and `maxOutputTokens` (1–1,000,000, lowered to the model row's maximum): the turn's
 * sampling, sent with each of its model calls.
 */
function validateSampling(b: Record<string, unknown>): Sampling | undefined {
  const out: Sampling = {};
  const num = (key: string) => (typeof b[key] === "number" && Number.isFinite(b[key]) ? (b[key] as number) : undefined);
  if (b.temperature !== undefined) {
    const t = num("temperature");
    if (t === undefined || t < 0 || t > 2) fail("temperature", "temperature must be a number from 0 to 2");
    out.temperature = t;
  }
  if (b.topP !== undefined) {
    const p = num("topP");
    if (p === undefined || p <= 0 || p > 1) fail("topP", "topP must be a number over 0 and at most 1");
    out.topP = p;
  }
  if (b.maxOutputTokens !== undefined) {
    const m = num("maxOutputTokens");
    if (m === undefined || !Number.isInteger(m) || m < 1 || m > MAX_OUTPUT_TOKENS)
      fail("maxOutputTokens", `maxOutputTokens must be an integer from 1 to ${MAX_OUTPUT_TOKENS}`);
    out.maxOutputTokens = m;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
