import type { ChatRequest } from "../session";
import type { Sampling } from "../providers";
import { DEFAULT_ASSISTANT_TURNS } from "../limits";
import { ChatBody } from "./request-schemas";
import { checkRequest } from "./schema-issues";
import { openTurnRequest } from "./validate-turn";

/** A message's content as the model gets it: a string, or its `{ type: "text", text }` parts joined. */
function text(content: unknown): string {
  return typeof content === "string" ? content : (content as Array<{ text: string }>).map((p) => p.text).join("");
}

/**
 * `POST …/chat` (ChatBody): a new turn (`messages` and `model`, plus every field of `POST …/turns`)
 * or the continuation of a turn that stopped on client tools (`turnId`; no messages: the turn's
 * transcript is the conversation).
 */
export function validateChat(body: unknown): ChatRequest {
  checkRequest(ChatBody, body);
  const b = body as Record<string, unknown>;
  const out: ChatRequest = {
    ...openTurnRequest(b),
    messages: [],
    maxAssistantTurns: (b.maxAssistantTurns as number | undefined) ?? DEFAULT_ASSISTANT_TURNS,
  };
  if (b.turnId !== undefined) {
    out.turnId = b.turnId as string;
    return out;
  }
  const sampling: Sampling = {};
  if (b.temperature !== undefined) sampling.temperature = b.temperature as number;
  if (b.topP !== undefined) sampling.topP = b.topP as number;
  if (b.maxOutputTokens !== undefined) sampling.maxOutputTokens = b.maxOutputTokens as number;
  if (Object.keys(sampling).length > 0) out.sampling = sampling;
  out.messages = (b.messages as Array<{ role: "system" | "user" | "assistant"; content: unknown }>).map((m) => ({
    role: m.role,
    content: text(m.content),
  }));
  return out;
}
