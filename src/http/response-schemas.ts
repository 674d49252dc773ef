import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode } from "../errors";

/**
 * The answers of the HTTP API as zod schemas, for /openapi.json only: answers are built by the
 * session object and checked against these in test/e2e/openapi-document.test.ts (real answers
 * driven through the gateway), so the document cannot drift from them unnoticed. Objects are open
 * (`looseObject`): a field added to an answer is not a breaking change.
 */

const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

const Usage = z
  .looseObject({ inputTokens: z.number(), outputTokens: z.number(), cacheReadTokens: z.number(), cacheWriteTokens: z.number() })
  .openapi("ModelUsage");

export const ChatMeta = z
  .looseObject({
    codeModeEngaged: z.boolean(),
    assistantTurns: z.number().int(),
    bridgeCalls: z.looseObject({ search: z.number(), describe: z.number(), call: z.number() }),
    costUsd: z.number().optional(),
    toolSummary: z.looseObject({ calls: z.number(), tools: z.array(z.string()), failures: z.number() }),
    usage: Usage,
    promptBytes: z.number(),
    stopReason: z
      .string()
      .optional()
      .openapi({ description: "`final`, `client_tools`, `max_assistant_turns`, `transcript_limit` or the error code that stopped the turn." }),
  })
  .openapi("ChatMeta");

/** Every error answer: `{ error: { code, message, path? } }`; `/chat` adds the provider's status and the turn. */
export const ErrorBody = z
  .looseObject({
    error: z.looseObject({
      code: z.enum(ERROR_CODE_LIST),
      message: z.string(),
      path: z.string().optional().openapi({ description: 'The request field at fault (`clientTools[0].name`); `""` is the body.' }),
      providerStatus: z.number().int().optional(),
      retryAfterSeconds: z.number().optional(),
    }),
    turnId: z.string().optional(),
    meta: ChatMeta.optional(),
  })
  .openapi("Error", { example: { error: { code: "invalid_request", message: "unknown field foo", path: "foo" } } });

export const Telemetry = z
  .looseObject({
    catalogSize: z.number().int(),
    catalogSources: z.looseObject({ openclaw: z.number(), mcp: z.number(), client: z.number() }),
    counters: z.looseObject({ search: z.number(), describe: z.number(), call: z.number() }),
    counterScope: z.string(),
    controlTools: z.array(z.string()),
    surface: z
      .looseObject({ kind: z.enum(["tool_search_code", "tool_search_tools", "direct", "none"]), tools: z.number(), bytes: z.number() })
      .optional(),
    toolSearch: z.looseObject({ mode: z.enum(["code", "tools"]), fallbackFrom: z.literal("code").optional() }).optional(),
    calledTools: z
      .array(z.looseObject({ tool: z.string(), id: z.string(), source: z.enum(["openclaw", "mcp", "client"]), calls: z.number() }))
      .optional(),
    subAgents: z
      .looseObject({
        count: z.number().int(),
        running: z.number().int(),
        completed: z.number().int(),
        failed: z.number().int(),
        assistantTurns: z.number().int(),
        costUsd: z.number().optional(),
      })
      .optional()
      .openapi({
        description:
          "Code mode, only once the turn started a Swarm sub-agent: its children's aggregates (the trajectory's `subAgents` lists each one). `costUsd` only when some child reported cost.",
      }),
  })
  .openapi("Telemetry");

const Output = z.union([
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("json"), value: z.unknown() }),
]);
const PendingToolCall = z
  .looseObject({ callId: z.string(), tool: z.string(), input: z.unknown(), runId: z.string().optional() })
  .openapi("PendingToolCall");

/** The seed's model-facing result of `exec` / `wait` (failures are data: still 200). */
export const CodeModeResult = z
  .discriminatedUnion("status", [
    z.looseObject({ status: z.literal("completed"), value: z.unknown(), output: z.array(Output).optional(), telemetry: Telemetry }),
    z.looseObject({
      status: z.literal("waiting"),
      runId: z.string(),
      reason: z.enum(["pending_tools", "yield"]),
      pendingToolCalls: z.array(PendingToolCall).optional(),
      output: z.array(Output).optional(),
      telemetry: Telemetry,
    }),
    z.looseObject({
      status: z.literal("failed"),
      error: z.string(),
      code: z
        .enum(["invalid_input", "runtime_unavailable", "aborted", "timeout", "output_limit_exceeded", "snapshot_limit_exceeded", "internal_error"])
        .optional(),
      output: z.array(Output).optional(),
      telemetry: Telemetry,
    }),
  ])
  .openapi("CodeModeResult", {
    example: {
      status: "completed",
      value: 3,
      telemetry: {
        catalogSize: 12,
        catalogSources: { openclaw: 12, mcp: 0, client: 0 },
        counters: { search: 0, describe: 0, call: 1 },
        counterScope: "c1",
        controlTools: ["exec", "wait"],
      },
    },
  });

/** A tool route's answer: exec/wait give a CodeModeResult, Tool Search and direct tools their own results. */
export const ToolResult = z.union([CodeModeResult, z.looseObject({})]).openapi("ToolResult");

export const ExecInput = z
  .looseObject({
    code: z.string().optional(),
    command: z.string().optional().openapi({ description: "An alias of `code`." }),
    language: z.enum(["javascript", "typescript"]).optional(),
    restartSafe: z.boolean().optional(),
  })
  .openapi("ExecInput", {
    description: "The input of `exec` (checked by the tool; a bad one is a `failed` result with `invalid_input`).",
    example: { code: "return 1 + 2" },
  });
export const WaitInput = z.looseObject({ runId: z.string() }).openapi("WaitInput", { example: { runId: "run_1" } });

const ModelTool = z.looseObject({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) }).openapi("ModelTool");

export const OpenTurnAnswer = z
  .looseObject({
    turnId: z.string(),
    codeModeEngaged: z.boolean(),
    toolSearchEngaged: z.boolean(),
    toolSearchMode: z.enum(["code", "tools"]).optional(),
    mcpServers: z.array(z.looseObject({ name: z.string(), namespace: z.string(), tools: z.number(), error: z.string().optional() })).optional(),
    tools: z.array(ModelTool),
    surface: z
      .looseObject({
        bytes: z.number().int().openapi({ description: "`tools` as JSON, in UTF-8 bytes: what the model is sent." }),
        directBytes: z.number().int().openapi({
          description:
            "What the same catalog would cost exposed directly (every tool its own definition, as with code mode off), in the same measure.",
        }),
      })
      .openapi({ description: "The size of the model-visible tool definitions beside direct exposure of the same catalog." }),
    telemetry: Telemetry,
  })
  .openapi("OpenTurnAnswer");

export const TurnDescription = z
  .looseObject({ turnId: z.string(), codeModeEngaged: z.boolean(), tools: z.array(ModelTool) })
  .openapi("TurnDescription", { description: "An open turn's model-visible tools, exactly as it opened (nothing is recorded)." });

export const ClientResultAnswer = z
  .looseObject({
    accepted: z.literal(true),
    result: z
      .union([
        z.looseObject({ status: z.literal("completed"), value: z.unknown() }),
        z.looseObject({ status: z.literal("failed"), error: z.string() }),
      ])
      .optional(),
  })
  .openapi("ClientResultAnswer");

export const DeleteTurnAnswer = z.looseObject({ telemetry: Telemetry }).openapi("DeleteTurnAnswer");
export const DeleteSessionAnswer = z.looseObject({ deleted: z.literal(true) }).openapi("DeleteSessionAnswer");

export const PendingApproval = z
  .looseObject({ approvalId: z.string(), turnId: z.string(), tool: z.string(), inputPreview: z.string(), requestedAt: z.number() })
  .openapi("PendingApproval");
export const ApprovalDecisionAnswer = z
  .looseObject({ approvalId: z.string(), decision: z.enum(["allow", "deny"]) })
  .openapi("ApprovalDecisionAnswer");

export const ChatAnswer = z
  .looseObject({
    turnId: z.string(),
    status: z.enum(["completed", "waiting"]),
    message: z.looseObject({ role: z.literal("assistant"), content: z.string() }).optional(),
    pendingToolCalls: z.array(PendingToolCall).optional(),
    meta: ChatMeta,
  })
  .openapi("ChatAnswer");

/** The `/chat` server-sent events: `event: <type>`, `data: <this JSON>`. */
export const ChatEvents = {
  turn: z.looseObject({ type: z.literal("turn"), turnId: z.string(), codeModeEngaged: z.boolean(), continued: z.boolean() }),
  text: z.looseObject({ type: z.literal("text"), delta: z.string() }),
  assistant_turn: z.looseObject({
    type: z.literal("assistant_turn"),
    n: z.number().int(),
    finishReason: z.enum(["stop", "tool-calls", "length", "content-filter", "other"]),
    usage: Usage,
    requestBytes: z.number(),
  }),
  tool_call_start: z.looseObject({ type: z.literal("tool_call_start"), callId: z.string(), name: z.string(), input: z.unknown() }),
  nested_call: z.looseObject({
    type: z.literal("nested_call"),
    parentCallId: z.string(),
    invocationId: z.string(),
    tool: z.string(),
    source: z.string(),
    ok: z.boolean(),
    durationMs: z.number(),
  }),
  tool_update: z.looseObject({
    type: z.literal("tool_update"),
    parentCallId: z.string(),
    invocationId: z.string().optional(),
    tool: z.string(),
    partial: z.string(),
  }),
  tool_call_end: z.looseObject({
    type: z.literal("tool_call_end"),
    callId: z.string(),
    name: z.string(),
    status: z.string(),
    untrusted: z.boolean(),
    result: z.string(),
  }),
  done: z.looseObject({ type: z.literal("done"), answer: ChatAnswer }),
  error: z.looseObject({ type: z.literal("error"), error: ErrorBody.shape.error, turnId: z.string().optional(), meta: ChatMeta.optional() }),
};

export const ChatEvent = z
  .discriminatedUnion("type", [
    ChatEvents.turn.openapi("ChatEventTurn"),
    ChatEvents.text.openapi("ChatEventText"),
    ChatEvents.assistant_turn.openapi("ChatEventAssistantTurn"),
    ChatEvents.tool_call_start.openapi("ChatEventToolCallStart"),
    ChatEvents.nested_call.openapi("ChatEventNestedCall"),
    ChatEvents.tool_update.openapi("ChatEventToolUpdate"),
    ChatEvents.tool_call_end.openapi("ChatEventToolCallEnd"),
    ChatEvents.done.openapi("ChatEventDone"),
    ChatEvents.error.openapi("ChatEventError"),
  ])
  .openapi("ChatEvent", {
    description:
      "One server-sent event of `/chat` with `Accept: text/event-stream`: `event: <type>` and `data: <this object as JSON>`; comment lines (`: keep-alive`) keep a quiet stream open. The stream ends after one `done` or `error`.",
  });

const NestedEntry = z.looseObject({
  invocationId: z.string(),
  tool: z.string(),
  source: z.string(),
  status: z.enum(["ok", "error", "pending"]),
  at: z.number(),
  durationMs: z.number().optional(),
  input: z.string().optional(),
  result: z.string().optional(),
  error: z.string().optional(),
  decision: z.string().optional(),
});

export const Trajectory = z
  .looseObject({
    turnId: z.string(),
    codeModeEngaged: z.boolean(),
    status: z.string(),
    meta: ChatMeta.optional(),
    telemetry: Telemetry,
    calls: z.array(
      z.looseObject({
        callId: z.string(),
        tool: z.string(),
        via: z.string(),
        input: z.unknown(),
        startedAt: z.number(),
        status: z.string().optional(),
        code: z.string().optional(),
        runId: z.string().optional(),
        durationMs: z.number().optional(),
        untrusted: z.boolean().optional(),
        decision: z.string().optional(),
        nested: z.array(NestedEntry),
      }),
    ),
    modelCalls: z.array(z.looseObject({ at: z.number() })),
    snapshots: z.array(z.looseObject({ at: z.number(), event: z.string(), runId: z.string(), callId: z.string().optional() })),
    limitsHit: z.array(z.looseObject({ at: z.number(), limit: z.string(), callId: z.string().optional(), detail: z.string().optional() })),
    omittedEvents: z.number().int(),
    droppedEvents: z.number().int(),
  })
  .openapi("Trajectory");

export const Health = z
  .looseObject({
    ok: z.literal(true),
    runtime: z.literal("quickjs-wasi"),
    version: z.string(),
    codeMode: z.looseObject({ enabled: z.boolean(), engagedForDefault: z.boolean(), source: z.string() }).optional(),
  })
  .openapi("Health");

/** The facades answer in their own formats (docs/facades.md); documented as open objects. */
export const FacadeBody = z.looseObject({}).openapi("FacadeBody", { description: "OpenAI- or Anthropic-format JSON (docs/facades.md)." });
