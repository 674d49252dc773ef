import { addTokenCounts, type ModelUsage, type Sampling } from "../providers";
import type { ChatErrorCode, ChatMeta, PendingClientCall, StopReason } from "./chat-events";

/**
 * What the session keeps about a turn driven by `/chat`, beside its transcript: the model it
 * talks to, where the loop stopped, and the run's accumulated stats (meta is built from these).
 */
export type ChatState = {
  /** `"provider/model"`; a continuation talks to the same model. */
  model: string;
  /** `running` while a /chat call drives the turn; `waiting` for client results; otherwise settled. */
  status: "running" | "waiting" | "completed" | "stopped";
  assistantTurns: number;
  usage: ModelUsage;
  promptBytes: number;
  toolCalls: number;
  failures: number;
  /** Distinct outer tool names, in first-call order (bounded). */
  tools: string[];
  /** Calls the caller must answer before the turn can continue. */
  pending: PendingClientCall[];
  /** How the loop itself ended (a failure that stopped the turn is `lastError`). */
  stopReason?: "final" | "client_tools" | "max_assistant_turns" | "transcript_limit";
  /** Why the last /chat call stopped the turn (`stopped`); retryable failures may be continued. */
  lastError?: ChatErrorCode;
  /** The model's context window: sizes model-facing results, client results included. */
  contextWindow?: number;
  /** The turn's sampling settings, sent with every model call of the turn (continuations too). */
  sampling?: Sampling;
  /** The caller's key for the history the turn was opened with (ChatRequest.historyKey). */
  historyKey?: string;
};

export const ZERO_USAGE: ModelUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

export function newChatState(model: string, contextWindow?: number, sampling?: Sampling): ChatState {
  return {
    model,
    status: "running",
    assistantTurns: 0,
    usage: { ...ZERO_USAGE },
    promptBytes: 0,
    toolCalls: 0,
    failures: 0,
    tools: [],
    pending: [],
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(sampling && Object.keys(sampling).length > 0 ? { sampling } : {}),
  };
}

/** Adds one call's usage to the turn's; each total saturates at MAX_TOKEN_COUNT instead of losing exactness. */
export function addUsage(total: ModelUsage, more: ModelUsage): void {
  total.inputTokens = addTokenCounts(total.inputTokens, more.inputTokens);
  total.outputTokens = addTokenCounts(total.outputTokens, more.outputTokens);
  total.cacheReadTokens = addTokenCounts(total.cacheReadTokens, more.cacheReadTokens);
  total.cacheWriteTokens = addTokenCounts(total.cacheWriteTokens, more.cacheWriteTokens);
}

const MAX_TOOL_NAMES = 64;

export function countToolCall(state: ChatState, name: string, failed: boolean): void {
  state.toolCalls++;
  if (failed) state.failures++;
  if (!state.tools.includes(name) && state.tools.length < MAX_TOOL_NAMES) state.tools.push(name);
}

export function chatMeta(
  state: ChatState,
  turn: { codeModeEngaged: boolean; counters: { search: number; describe: number; call: number } },
  costUsd: number | undefined,
): ChatMeta {
  const reason = stopReason(state);
  return {
    codeModeEngaged: turn.codeModeEngaged,
    assistantTurns: state.assistantTurns,
    bridgeCalls: { search: turn.counters.search, describe: turn.counters.describe, call: turn.counters.call },
    ...(costUsd !== undefined ? { costUsd } : {}),
    toolSummary: { calls: state.toolCalls, tools: [...state.tools], failures: state.failures },
    usage: { ...state.usage },
    promptBytes: state.promptBytes,
    ...(reason !== undefined ? { stopReason: reason } : {}),
  };
}

/** Why the turn's last /chat call ended: a failure is not a final answer. Still running: none yet. */
function stopReason(state: ChatState): StopReason | undefined {
  if (state.status === "running") return undefined;
  if (state.status === "stopped") return state.lastError ?? "internal_error";
  return state.stopReason ?? "final";
}
