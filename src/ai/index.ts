/** `codemode-edge/ai`: code mode over the gateway as Vercel AI SDK tools (docs/client.md). `ai` is an optional peer. */
export { codeModeTools, openCodeModeTools, CodemodeToolError, type CodeModeTools, type CodeModeToolsOptions } from "./code-mode-tools";
