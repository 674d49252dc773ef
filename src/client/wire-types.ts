/**
 * What the routes take and answer, as the typed client sends and reads them. Every shape comes from
 * the router's own modules through the package's public surface (type-only: nothing of the server
 * reaches a client bundle); the few wire forms that differ from the validated form are derived here.
 */
import type {
  ApprovalDecision,
  ChatAnswer,
  ChatEvent,
  ChatRequest,
  ClientResultAnswer,
  ClientResultBody,
  CodeModeExecInput,
  CodeModeResult,
  CodeModeTelemetry,
  CodeModeWaitInput,
  ErrorCode,
  HealthAnswer,
  OpenTurnAnswer,
  OpenTurnRequest,
  PendingApproval,
  Sampling,
  Trajectory,
  TurnDescription,
} from "../public";

export type {
  ApprovalDecision,
  ChatAnswer,
  ChatEvent,
  ClientResultAnswer,
  ClientResultBody,
  CodeModeExecInput,
  CodeModeResult,
  CodeModeWaitInput,
  HealthAnswer,
  OpenTurnAnswer,
  PendingApproval,
  Trajectory,
  TurnDescription,
};

/** `POST …/turns` body. */
export type OpenTurnBody = OpenTurnRequest;

/**
 * `POST …/chat` body: a new turn (`model`, `messages`, every turn field, sampling at the top level)
 * or a continuation (`turnId` alone). The router's `ChatRequest` is the validated form (defaults
 * filled, sampling grouped); this is the form it accepts.
 */
export type ChatBody = Omit<ChatRequest, "messages" | "maxAssistantTurns" | "sampling" | "historyKey"> &
  Sampling & { messages?: ChatRequest["messages"]; maxAssistantTurns?: number };

/** `DELETE …/turns/:turnId`. */
export type DeleteTurnAnswer = { telemetry: CodeModeTelemetry };
/** `DELETE /v1/sessions/:sessionId`. */
export type DeleteSessionAnswer = { deleted: true };
/** `POST …/approvals/:approvalId`. */
export type ApprovalDecisionAnswer = { approvalId: string; decision: ApprovalDecision["decision"] };

/** The one event a /chat stream ends with when it fails (code, message, and the turn to continue). */
export type ChatErrorEvent = Extract<ChatEvent, { type: "error" }>;

/** An error code the gateway answers, or one the client itself reports (no answer, or not the gateway's). */
export type ClientErrorCode = ErrorCode | "network_error" | "invalid_response";
