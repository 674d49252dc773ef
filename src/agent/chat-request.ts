import type { Sampling } from "../providers";
import type { OpenTurnRequest } from "../turns";

/** A validated `POST …/chat` body: a new turn (`model`, `messages`, turn fields) or a continuation (`turnId`). */
export type ChatRequest = OpenTurnRequest & {
  messages: Array<{ role: "system" | "user" | "assistant"; content: string }>;
  turnId?: string;
  maxAssistantTurns: number;
  /** `temperature`, `topP`, `maxOutputTokens` of a new turn (kept for its continuations). */
  sampling?: Sampling;
  /** A caller's key for the history the turn was opened with (kept in its state; the `/v1` facades compare it on a follow-up). */
  historyKey?: string;
  /**
   * Set by the HTTP edge (never taken from a body) when the caller wants the final answer as JSON:
   * the stream then carries only `turn` and the final `done` or `error`, not every event between.
   */
  answerOnly?: boolean;
};
