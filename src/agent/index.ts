export { runAgentLoop, type ToolRun, type OpenedTool, type LoopDeps, type LoopEnd, type NotRunReason } from "./agent-loop";
export {
  shownCall,
  encodeEvent,
  sseFrame,
  readEvents,
  type ChatMeta,
  type SubAgents,
  type StopReason,
  type PendingClientCall,
  type DirectClientAdmission,
  type ChatAnswer,
  type ChatError,
  type ChatEvent,
  type ChatErrorCode,
} from "./chat-events";
export { ZERO_USAGE, newChatState, addUsage, countToolCall, chatMeta, type ChatState } from "./chat-state";
export { modelResultLimits, modelFacingResult, type ResultLimits, type ModelFacing } from "./model-result";
export { buildTrajectory, type TrajectoryRow, type NestedEntry, type OuterCall, type Trajectory } from "./trajectory";
export { type ChatRequest } from "./chat-request";
export {
  type OpenedCall,
  type OuterCallContext,
  type OuterReply,
  type ChatPort,
  type ChatCall,
  type ChatRecords,
  type NotRunCode,
  type Promised,
} from "./agent-port";
export { runChat } from "./chat-turn";
