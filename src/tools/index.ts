export { defineToolPlugin, type ToolPluginSpec } from "./define-tool-plugin";
export { executeTool, type ToolOutcome } from "./executor";
export { checkValue, compileSchema } from "./schema-validator";
export type { JsonSchema, SessionStore, ToolContext, ToolDefinition, ToolNamespace, ToolNamespaceSpec, ToolPlugin } from "./types";

export { type SchemaCheck } from "./schema-validator";
export { type TurnParty, type SubAgentDepth, type ToolCallEvent, type BeforeToolCallResult, type ToolHooks } from "./types";
export {
  UNTRUSTED_NOTICE,
  UNTRUSTED_OVERHEAD_BYTES,
  sanitizeUntrusted,
  sanitizeUntrustedIn,
  wrapUntrusted,
  isWrappedUntrusted,
} from "./untrusted-content";
export { type PolicyDecision, type Admission, type CallPolicy } from "./call-policy";
export { taintedStore, type TaintScope } from "./taint-store";
