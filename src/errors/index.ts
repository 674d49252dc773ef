export { ERROR_CODES, isRetryable, statusOf, type ChatErrorCode, type ErrorCode, type SessionFailure, type SessionReply } from "./error-codes";
export { GatewayError } from "./gateway-error";
export { objectResetMessage, sessionResetMessage, type ResetMoment } from "./session-reset";
