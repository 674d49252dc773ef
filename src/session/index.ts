/** The Worker ↔ session object contract: what the edge may call, and the replies as data. */
export {
  answer,
  notFound,
  type ApprovalDecision,
  type ChatRequest,
  type ClientResultAnswer,
  type ClientResultBody,
  type OpenTurnAnswer,
  type PendingApproval,
  type SessionFailure,
  type SessionReply,
  type SessionRpc,
  type TrustedResult,
  type TurnSurface,
} from "./session-rpc";
