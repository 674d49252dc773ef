/** What `loadValidators()` (request-validators.ts) loads: every check of a request body. */
export { validateChat } from "./validate-chat";
export { validateClientTool } from "./validate-client-tool";
export { validateOpenTurn, validateClientResult, validateApprovalDecision, refusePrivateMcpServers } from "./validate-turn";
