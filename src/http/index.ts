/** The public surface of src/http (other folders import from here). */
export { createApp, type Facades, type FacadeRequestContext, type GatewayEnv, type McpHandler, type McpRequestContext } from "./app";
export type { HealthAnswer } from "./health";
export { loadGatewayTokens, authenticate, type TokensResult } from "./auth";

export { formatPath, parseJsonBody, jsonValueProblem, readBodyText } from "./json-body";
export { rateLimitedMessage, type TenantCharge } from "./rate-limit";
export { callSessionTool, type SessionStub } from "./session-call";
export { loadValidators, type Validators } from "./request-validators";
export { SESSION_ID, SESSION_ID_RULE } from "./request-patterns";
