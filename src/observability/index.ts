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
export * from "./turn-debug";
