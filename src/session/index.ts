/** The Worker ↔ session object contract: what the edge may call, and the replies as data. */
export {
  answer,
  notFound,
  type ApprovalDecision,
  type CallTurn,
  type ChatRequest,
  type ClientResultAnswer,
  type ClientResultBody,
  type OpenTurnAnswer,
  type PendingApproval,
  type SessionFailure,
  type SessionReply,
  type SessionRpc,
  type TrustedResult,
  type TurnDescription,
  type TurnSurface,
} from "./session-rpc";
export { TurnService } from "./turn-service";
export { CallRegistry, type TrackedCall } from "./call-registry";
export { catalogDigest, decodedTurn, encodeTurn } from "./turn-row";
export { registeredSecrets } from "./registered-secrets";
export type {
  Admission,
  ApprovalDecisionInput,
  ApprovalsPort,
  EncodedTurn,
  ExpiryPort,
  LostApproval,
  Promised,
  QuotaPort,
  Redaction,
  SessionPorts,
  SessionStoragePort,
  StoredTurn,
  ToolCallClient,
  ToolCallClientsPort,
  TranscriptPort,
  TurnStorePort,
} from "./ports";
