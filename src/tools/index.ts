export { defineToolPlugin, type ToolPluginSpec } from "./define-tool-plugin";
export { executeTool, type ToolOutcome } from "./executor";
export { checkValue, compileSchema } from "./schema-validator";
export type { JsonSchema, SessionStore, ToolContext, ToolDefinition, ToolPlugin } from "./types";
export * from "./executor";
export * from "./schema-validator";
export * from "./types";
export * from "./untrusted-content";
export * from "./call-policy";
