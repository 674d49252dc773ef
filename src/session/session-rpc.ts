import type { CodeModeTelemetry } from "../code-mode";
import type { ModelTool, SurfaceSize } from "../turns";
import type { ChatRequest, Trajectory } from "../agent";
import type { ChildOutcome } from "../swarm";

export type { ChatRequest };

/** An approval waiting for an operator, as `GET …/approvals` lists it (the preview is redacted). */
export type PendingApproval = { approvalId: string; turnId: string; tool: string; inputPreview: string; requestedAt: number };
export type ApprovalDecision = { decision: "allow" | "deny"; reason?: string };

/**
 * The session object's RPC contract: what the Worker may call and what comes back. The
 * Durable Object class implements it; src/http imports only this module. Replies are data:
 * a failure carries a reason, and the HTTP edge alone decides which status a reason gets.
 */

import type { SessionFailure, SessionReply } from "../errors";
/** Why a session call was refused (the HTTP edge maps each to its status: src/errors). */
export type { SessionFailure, SessionReply };

/** A tool result and whether any of it came from the network (MCP, network-derived plugin tools). */
export type TrustedResult = { result: unknown; untrusted: boolean };

export type ClientResultBody = { callId: string; value?: unknown; error?: { message: string } };

/**
 * A client result was taken. `result`: what a Tool Search `tool_call` that handed this call out
 * answers now that it arrived (checked like every client result); a parked cell gets it at its
 * next `wait` (or `tool_search_code { runId }`) instead.
 */
export type ClientResultAnswer = { accepted: true; result?: { status: "completed"; value: unknown } | { status: "failed"; error: string } };

/** `POST …/turns`: what the model would be sent, and which surface owns it (code mode, Tool Search, or neither). */
export type OpenTurnAnswer = {
  turnId: string;
  codeModeEngaged: boolean;
  toolSearchEngaged: boolean;
  toolSearchMode?: "code" | "tools";
  /** The turn's MCP servers: guest identifier, tools listed, or why listing failed (the turn opens either way). */
  mcpServers?: Array<{ name: string; namespace: string; tools: number; error?: string }>;
  tools: ModelTool[];
  /** `tools` in bytes (their JSON), beside what the same catalog exposed directly (code mode off) would cost. */
  surface: SurfaceSize;
  telemetry: CodeModeTelemetry;
};

/**
 * The /chat turn a client call id belongs to (the `/v1` facades find a parked run by the ids of a
 * follow-up's tool results): the turn's status, the calls it waits on, which of `callIds` it already
 * took, and the history key it was opened with.
 */
export type CallTurn = { turnId: string; status: string; pending: string[]; delivered: string[]; historyKey?: string };

/** An open turn's model-facing surface, as `openTurn` answered it. */
export type TurnSurface = { codeModeEngaged: boolean; tools: ModelTool[] };
/** `GET …/turns/:turnId`: an open turn's surface, with its id. */
export type TurnDescription = TurnSurface & { turnId: string };

export interface SessionRpc {
  openTurn(tenantId: string, sessionId: string, req: unknown): Promise<SessionReply<OpenTurnAnswer>>;
  /** The surface of an open turn (unknown, or another tenant's: not_found). Read-only: no activity is recorded. */
  describeTurn(tenantId: string, turnId: string): Promise<SessionReply<TurnDescription>>;
  /**
   * A model-visible tool of the turn: `exec`/`wait` and Tool Search's controls answer a
   * CodeModeResult-shaped value, direct tools their result.
   */
  callTool(tenantId: string, turnId: string, toolName: string, input: unknown, requestId?: string): Promise<SessionReply<TrustedResult>>;
  /** The HTTP client of `requestId` went away: cancel that call's active work. */
  cancelRequest(requestId: string): Promise<void>;
  /** The object was reset under an exec or wait: report that cell as failed. */
  lostCall(tenantId: string, turnId: string, toolName: string, requestId?: string): Promise<SessionReply<unknown>>;
  clientResult(tenantId: string, turnId: string, body: ClientResultBody): Promise<SessionReply<ClientResultAnswer>>;
  /** The /chat turn of the session that handed out (or already took) any of `callIds`; none: not_found. */
  callTurn(tenantId: string, callIds: string[]): Promise<SessionReply<CallTurn>>;
  deleteTurn(tenantId: string, turnId: string): Promise<SessionReply<{ telemetry: CodeModeTelemetry }>>;
  deleteSession(): Promise<SessionReply<{ deleted: true }>>;
  /**
   * Runs the agent loop of one `/chat` call. The answer is a stream of NDJSON `ChatEvent`s ending
   * with one `done` or `error` event (src/agent/chat-events.ts); cancelling the stream, or
   * `cancelRequest(requestId)`, cancels the turn's active work.
   */
  chat(tenantId: string, sessionId: string, req: ChatRequest, requestId: string): Promise<ReadableStream<Uint8Array>>;
  /** Swarm: a sub-agent turn run here to its end, detached from the caller; idempotent by `requestId`. */
  startChild(tenantId: string, sessionId: string, req: ChatRequest, requestId: string, parentSessionId: string): Promise<void>;
  /** Swarm: a child of a turn here stored its result; whoever waits for it reads it from the child. */
  childSettled(childSessionId: string): Promise<void>;
  /** Swarm: that turn's outcome (stored here before it is answered), waiting up to `waitMs` while it runs. */
  childResult(tenantId: string, requestId: string, waitMs: number): Promise<ChildOutcome>;
  trajectory(tenantId: string, turnId: string): Promise<SessionReply<Trajectory>>;
  /** Pending operator approvals of the session (a session that stored nothing: not_found). */
  listApprovals(tenantId: string): Promise<SessionReply<PendingApproval[]>>;
  /** Decide one: unknown (or another tenant's) not_found; no longer pending conflict. */
  decideApproval(
    tenantId: string,
    approvalId: string,
    decision: ApprovalDecision,
  ): Promise<SessionReply<{ approvalId: string; decision: "allow" | "deny" }>>;
}

export const notFound = (message: string): SessionReply<never> => ({ ok: false, reason: "not_found", message });
export const answer = <T>(body: T): SessionReply<T> => ({ ok: true, body });
