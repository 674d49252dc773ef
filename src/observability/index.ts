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
export * from "./cell-record";
export * from "./log";
export * from "./debug-flags";
export * from "./redact-secrets";
export { redactSource } from "./redact-source";
export { redactedPreview } from "./redacted-preview";
export { escapeDisguisingJson } from "./disguised-text";
export { isCredentialName, isCredentialParam } from "./credential-names";
export { MASK, SECRET_SHAPES, maskSecrets, type RedactOptions } from "./secret-shapes";
export * from "./turn-debug";
