/** The public surface of src/code-mode (other folders import from here). */
export {
  TRUNCATION_GUIDANCE,
  ERROR_TRUNCATED_SUFFIX,
  OUTPUT_ENVELOPE_OVERHEAD_BYTES,
  MIN_ERROR_BYTES,
  OutputBudget,
  type TruncationMarker,
  type OutputBudgetState,
} from "./output-budget";
export { utf8ByteLength, utf8PrefixLength, utf8Prefix, jsonStringPrefixLength, jsonStringBytes, escapeLoneSurrogates } from "./output-budget-utf8";
export {
  type CodeModeErrorCode,
  type CodeModeOutput,
  type CodeModeTelemetry,
  type SurfaceTelemetry,
  type SubAgentTelemetry,
  type CalledTool,
  type CodeModePendingToolCall,
  type CodeModeCompletedResult,
  type CodeModeWaitingResult,
  type CodeModeFailedResult,
  type CodeModeResult,
  type CodeModeLanguage,
  type CodeModeExecInput,
  type CodeModeWaitInput,
} from "./types";
export { boundedJson, boundedResult, type BoundedResult } from "./bounded-json";
