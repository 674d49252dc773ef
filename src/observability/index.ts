export { cellFields, cellTrace, execLanguage, type CellTrace } from "./cell-record";
export {
  consoleSink,
  describeError,
  logRecord,
  MAX_LOG_STRING,
  redact,
  setLogSink,
  type BridgeCounts,
  type CellFields,
  type HostErrorFields,
  type LogFields,
  type LogKind,
  type LogSink,
  type RequestFields,
} from "./log";
export { requestLog, type RequestLogVars } from "./request-log";

export { MAX_LOG_NAMES, type CellTool, type ToolCallFields, type ImagePruneFields, type DebugFields } from "./log";
export { DEBUG_OFF, MAX_DEBUG_SNAPSHOT_CHARS, parseDebugFlags, type DebugFlags } from "./debug-flags";
export { redactSecrets } from "./redact-secrets";
export { redactSource } from "./redact-source";
export { redactedPreview } from "./redacted-preview";
export { escapeDisguisingJson, escapeDisguisingText } from "./disguised-text";
export { isCredentialName, isCredentialParam } from "./credential-names";
export { MASK, SECRET_SHAPES, maskSecrets, type RedactOptions } from "./secret-shapes";
export { debugFlags, logTurnSurface, transportObserver, type TurnDebugFacts } from "./debug-output";
export { secretForms, sentSecretList, maskSentSecrets, maskSentSecretsIn, SentSecretStream } from "./sent-secrets";
export { storedInput, type RedactionOptions } from "./stored-input";
