/** The provider seam of agent turns: neutral types, model resolution, cost, and the wire-format clients. */
export {
  ProviderError,
  type ModelToolCall,
  type ModelMessage,
  type ModelUsage,
  type FinishReason,
  type ModelEvent,
  type Sampling,
  type ModelRequest,
  type ProviderErrorCode,
  type TransportObserver,
  type ResolvedModel,
  type ModelClient,
} from "./types";
export { costUsd } from "./cost";
export { addTokenCounts, tokenCount } from "./token-count";
export { DEFAULT_CONTEXT_WINDOW, resolveModel, type ResolveModelResult } from "./resolve-model";
export { createModelClient, type ModelClientOptions } from "./create-model-client";
