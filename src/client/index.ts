/**
 * `codemode-edge/client`: a typed client of the gateway's routes (docs/client.md). Types are the
 * router's own (type-only imports: no server code reaches a client bundle).
 */
export {
  CodemodeClient,
  type CallOptions,
  type ClientCallOutcome,
  type ClientOptions,
  type FetchLike,
  type RunOptions,
  type RunOutcome,
} from "./codemode-client";
export type { CodemodeError, Result } from "./client-error";
export { sseEvents } from "./sse-events";
export type {
  ApprovalDecision,
  ApprovalDecisionAnswer,
  ChatAnswer,
  ChatBody,
  ChatErrorEvent,
  ChatEvent,
  ClientErrorCode,
  ClientResultAnswer,
  ClientResultBody,
  CodeModeExecInput,
  CodeModeResult,
  CodeModeWaitInput,
  DeleteSessionAnswer,
  DeleteTurnAnswer,
  HealthAnswer,
  OpenTurnAnswer,
  OpenTurnBody,
  PendingApproval,
  Trajectory,
  TurnDescription,
} from "./wire-types";

import { CodemodeClient, type ClientOptions } from "./codemode-client";

/** `createClient({ baseUrl, token })`: the same as `new CodemodeClient(...)`. */
export function createClient(options: ClientOptions): CodemodeClient {
  return new CodemodeClient(options);
}
