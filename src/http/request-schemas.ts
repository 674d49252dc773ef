import { z } from "@hono/zod-openapi";
import { CODE_MODE_CONTROL_TOOLS } from "../catalog";
import { AGENT_ID_PATTERN, AGENT_ID_RULE } from "../config";
import { mcpServerProblem } from "../mcp";
import { compileSchema } from "../tools";
import { MAX_ASSISTANT_TURNS, MAX_CHAT_MESSAGE_CHARS, MAX_CHAT_MESSAGES, MAX_CLIENT_TOOLS, MAX_DESCRIPTION_CHARS, MAX_LIST } from "../limits";
import type { PathOverride } from "./schema-issues";
import { APPROVAL_ID, CLIENT_TOOL_SPELLINGS, SESSION_ID, TOOL_NAME, TURN_ID } from "./request-patterns";

export { APPROVAL_ID, CLIENT_TOOL_SPELLINGS, SESSION_ID, TOOL_NAME, TURN_ID };

/**
 * The request bodies and path parameters of the HTTP API as zod schemas: the routes validate with
 * them and /openapi.json is generated from them, so the two cannot drift. Messages are the
 * contract's, `{path}` standing for the field's path (schema-issues.ts fills it in and reports the
 * first problem); a refinement's message naming user text is a function (`say`), never a template.
 */

/** A refinement's issue: its message built from the field's path, optionally reported at a path of its own. */
function issue(say: (at: string) => string, options: { path?: (string | number)[]; at?: string } = {}) {
  const params: { say: (at: string) => string } & Partial<PathOverride> = { say, ...(options.at !== undefined ? { path: options.at } : {}) };
  return { code: "custom" as const, message: "", params, ...(options.path ? { path: options.path } : {}) };
}

// --- Path parameters (their checks and statuses are the router's: a bad session id is 400, a bad turn id 404)

export const SessionIdParam = z.string().regex(SESSION_ID).openapi({ description: "Chosen by the client; one session object per tenant and id." });
export const TurnIdParam = z.string().regex(TURN_ID).openapi({ description: "From the answer of `POST …/turns` or `/chat`." });
export const ToolNameParam = z
  .string()
  .regex(TOOL_NAME)
  .openapi({ description: "A model-visible tool of the turn (`exec`, `wait`, Tool Search's, or a direct tool)." });
export const ApprovalIdParam = z.string().regex(APPROVAL_ID);

// --- Client tools

/** Client tool names: what the client calls them, 1-128 characters, no control characters (C0, DEL, C1). */
const CLIENT_TOOL_NAME = /^[^\u0000-\u001f\u007f-\u009f]{1,128}$/;
const { input: INPUT_SPELLINGS, output: OUTPUT_SPELLINGS } = CLIENT_TOOL_SPELLINGS;

const JsonSchemaObject = z
  .record(z.string(), z.unknown(), { error: "{path} must be a JSON Schema object" })
  .superRefine((schema, ctx) => {
    const compiled = compileSchema(schema);
    if (!compiled.ok) ctx.addIssue(issue((at) => `${at} is not a usable JSON Schema (${compiled.message})`));
  })
  .openapi({ description: "A JSON Schema object (its `pattern`s are checked for catastrophic backtracking)." });

const CLIENT_TOOL_NAME_RULE = "{path} must be 1-128 characters without control characters";
const ClientToolName = z
  .string({ error: CLIENT_TOOL_NAME_RULE })
  .regex(CLIENT_TOOL_NAME, CLIENT_TOOL_NAME_RULE)
  .superRefine((name, ctx) => {
    if (CODE_MODE_CONTROL_TOOLS.includes(name))
      ctx.addIssue(
        issue(
          (at) =>
            `${at} ${JSON.stringify(name)} is the name of a code-mode control tool (${CODE_MODE_CONTROL_TOOLS.join(", ")}); give the client tool another name`,
        ),
      );
  });

/** JSON text with object keys sorted: two spellings of one schema compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Two spellings given at once must say the same thing (otherwise which one applies would be a guess). */
function sameSchema(tool: Record<string, unknown>, spellings: readonly string[], what: string, ctx: z.RefinementCtx): void {
  let chosen: { key: string; text: string } | undefined;
  for (const key of spellings) {
    if (tool[key] === undefined) continue;
    const text = canonical(tool[key]);
    if (chosen && chosen.text !== text) {
      const first = chosen.key;
      ctx.addIssue(
        issue(
          (at) =>
            `${at} differs from ${at.slice(0, -key.length)}${first}; declare the ${what} schema once (${spellings.join(", ")} are the same field)`,
          { path: [key] },
        ),
      );
      return;
    }
    chosen ??= { key, text };
  }
}

/**
 * One `clientTools[i]` entry. Names follow the seed's "Tool names and collisions": any name of 1-128
 * characters without control characters is accepted (the guest callable name is normalized later);
 * the code-mode control names are refused rather than silently dropped. MCP (`title`, `annotations`,
 * `icons`, `_meta`), Anthropic (`cache_control`) and OpenAI (`type`, `strict`) tool metadata is
 * accepted so their tool lists pass through, not used; any other key is refused: a misspelt schema
 * key must not leave the model with `input: unknown`.
 */
export const ClientToolSchema = z
  .strictObject(
    {
      name: ClientToolName,
      description: z
        .string({ error: `{path} must be a string of at most ${MAX_DESCRIPTION_CHARS} characters` })
        .max(MAX_DESCRIPTION_CHARS, `{path} must be a string of at most ${MAX_DESCRIPTION_CHARS} characters`)
        .optional(),
      parameters: JsonSchemaObject.optional(),
      inputSchema: JsonSchemaObject.optional().openapi({ description: "MCP's spelling of `parameters`." }),
      input_schema: JsonSchemaObject.optional().openapi({ description: "Anthropic's spelling of `parameters`." }),
      outputSchema: JsonSchemaObject.optional(),
      output_schema: JsonSchemaObject.optional(),
      title: z.unknown().optional(),
      annotations: z.unknown().optional(),
      icons: z.unknown().optional(),
      _meta: z.unknown().optional(),
      cache_control: z.unknown().optional(),
      type: z.unknown().optional(),
      strict: z.unknown().optional(),
    },
    {
      error: (iss) =>
        iss.code === "invalid_type"
          ? "{path} must be an object"
          : iss.code === "unrecognized_keys"
            ? "{path}.{key} is not a client tool field; use name, description, parameters (or inputSchema / input_schema) and outputSchema"
            : undefined,
    },
  )
  .superRefine((tool, ctx) => {
    sameSchema(tool, INPUT_SPELLINGS, "input", ctx);
    sameSchema(tool, OUTPUT_SPELLINGS, "output", ctx);
  })
  .openapi("ClientTool");

// --- POST …/turns

const MAX_MCP_SERVERS = 16;

const stringList = (field: string) =>
  z
    .array(
      z
        .string({ error: "{path} must be a non-empty string of at most 128 characters" })
        .min(1, "{path} must be a non-empty string of at most 128 characters")
        .max(128, "{path} must be a non-empty string of at most 128 characters"),
      { error: `${field} must be an array of strings` },
    )
    .max(MAX_LIST, `${field} has more than ${MAX_LIST} entries`)
    .optional();

const MODEL_RULE = 'model must look like "provider/model"';
const senderField = (key: string) => {
  const rule = `${key} must be 1-256 characters without control characters`;
  return z
    .string({ error: rule })
    .min(1, rule)
    .max(256, rule)
    .regex(/^[^\u0000-\u001f\u007f]*$/, rule)
    .optional();
};

/** An MCP server of the turn, as documented; checked by the same rules as configured servers (mcpServerProblem). */
const McpServerDoc = z.unknown().openapi({
  type: "object",
  properties: { url: { type: "string", format: "uri" }, headers: { type: "object", additionalProperties: { type: "string" } } },
  required: ["url"],
  additionalProperties: false,
});

const McpServers = z.record(z.string(), McpServerDoc, { error: "mcpServers must be an object of { url, headers? }" }).superRefine((servers, ctx) => {
  const names = Object.keys(servers);
  if (names.length > MAX_MCP_SERVERS) return ctx.addIssue(issue(() => `at most ${MAX_MCP_SERVERS} MCP servers per turn`));
  for (const name of names) {
    const path = `mcpServers.${name}`;
    const problem = mcpServerProblem(name, servers[name], "turn");
    if (problem) return ctx.addIssue(issue(() => problem.message, { at: problem.path ? `${path}.${problem.path}` : path }));
  }
});

/** The fields of `POST …/turns`, which a new `/chat` turn takes too. */
const openTurnShape = {
  agentId: z
    .string({ error: `agentId must be ${AGENT_ID_RULE}` })
    .regex(AGENT_ID_PATTERN, `agentId must be ${AGENT_ID_RULE}`)
    .optional(),
  model: z
    .string({ error: MODEL_RULE })
    .regex(/^[^/\s]+\/\S+$/, MODEL_RULE)
    .max(200, MODEL_RULE)
    .optional()
    .openapi({ example: "openai/gpt-4.1-mini" }),
  allow: stringList("allow"),
  deny: stringList("deny"),
  disableTools: z.boolean({ error: "disableTools must be a boolean" }).optional(),
  clientTools: z
    .array(ClientToolSchema, { error: "clientTools must be an array" })
    .max(MAX_CLIENT_TOOLS, `clientTools has more than ${MAX_CLIENT_TOOLS} entries`)
    .superRefine((tools, ctx) => {
      const seen = new Set<string>();
      for (const [i, t] of tools.entries()) {
        if (seen.has(t.name)) return ctx.addIssue(issue(() => `duplicate client tool ${JSON.stringify(t.name)}`, { path: [i, "name"] }));
        seen.add(t.name);
      }
    })
    .optional(),
  mcpServers: McpServers.optional(),
  // Who the turn is for: passed to every tool call's context (never authenticated here).
  senderId: senderField("senderId"),
  senderName: senderField("senderName"),
  channel: senderField("channel"),
};

const BODY_OBJECT = { error: (iss: { code: string }) => (iss.code === "invalid_type" ? "body must be a JSON object" : undefined) };

export const OpenTurnBody = z.strictObject(openTurnShape, BODY_OBJECT).openapi("OpenTurnRequest");

// --- POST …/chat

/** The most output tokens a turn may ask for per model call (the model row's own maximum applies too). */
const MAX_OUTPUT_TOKENS = 1_000_000;

/** A message's content: a string, or an array of `{ type: "text", text }` parts (joined). */
const Content = z
  .union([z.string(), z.array(z.unknown())], { error: '{path} must be a string or an array of { type: "text", text } parts' })
  .superRefine((v, ctx) => {
    let text: string;
    if (typeof v === "string") text = v;
    else {
      const parts: string[] = [];
      for (const [i, p] of v.entries()) {
        const isText =
          typeof p === "object" && p !== null && (p as { type?: unknown }).type === "text" && typeof (p as { text?: unknown }).text === "string";
        if (!isText)
          return ctx.addIssue(issue((at) => `${at} must be { type: "text", text: string } (other part types are not supported)`, { path: [i] }));
        parts.push((p as { text: string }).text);
      }
      text = parts.join("");
    }
    if (text.length > MAX_CHAT_MESSAGE_CHARS) return ctx.addIssue(issue((at) => `${at} is longer than ${MAX_CHAT_MESSAGE_CHARS} characters`));
    // Providers refuse empty user/system turns: refused here with the path instead of a provider 502.
    if (text.trim() === "") ctx.addIssue(issue((at) => `${at} must not be empty`));
  })
  .openapi({
    anyOf: [
      { type: "string", maxLength: MAX_CHAT_MESSAGE_CHARS },
      { type: "array", items: { type: "object", properties: { type: { const: "text" }, text: { type: "string" } }, required: ["type", "text"] } },
    ],
  });

export const ChatMessage = z
  .strictObject(
    {
      role: z.enum(["system", "user", "assistant"], {
        error: '{path} must be "system", "user" or "assistant" (tool results arrive through client-results)',
      }),
      content: Content,
    },
    { error: (iss) => (iss.code === "invalid_type" ? "{path} must be { role, content }" : undefined) },
  )
  .openapi("ChatMessage");

/** The fields a continuation (`turnId`) may not change: they belong to the turn that was opened. */
const TURN_FIELDS = [
  "agentId",
  "allow",
  "deny",
  "disableTools",
  "clientTools",
  "mcpServers",
  "senderId",
  "senderName",
  "channel",
  "temperature",
  "topP",
  "maxOutputTokens",
] as const;

/**
 * `POST …/chat`: a new turn (`messages` and `model`, plus every field of `POST …/turns`) or the
 * continuation of a turn that stopped on client tools (`turnId`; no messages: the turn's
 * transcript is the conversation). `temperature` (0–2; the Messages API takes 0–1, checked once
 * the model is known), `topP` (over 0, at most 1) and `maxOutputTokens` are the turn's sampling.
 */
export const ChatBody = z
  .strictObject(
    {
      ...openTurnShape,
      messages: z
        .array(ChatMessage, { error: "messages must be a non-empty array of { role, content }" })
        .max(MAX_CHAT_MESSAGES, `messages has more than ${MAX_CHAT_MESSAGES} entries`)
        .optional(),
      turnId: z
        .string({ error: "turnId must be the turnId of an earlier /chat answer" })
        .regex(TURN_ID, "turnId must be the turnId of an earlier /chat answer")
        .optional(),
      maxAssistantTurns: z
        .number({ error: `maxAssistantTurns must be an integer from 1 to ${MAX_ASSISTANT_TURNS}` })
        .int(`maxAssistantTurns must be an integer from 1 to ${MAX_ASSISTANT_TURNS}`)
        .min(1, `maxAssistantTurns must be an integer from 1 to ${MAX_ASSISTANT_TURNS}`)
        .max(MAX_ASSISTANT_TURNS, `maxAssistantTurns must be an integer from 1 to ${MAX_ASSISTANT_TURNS}`)
        .optional(),
      temperature: z
        .number({ error: "temperature must be a number from 0 to 2" })
        .min(0, "temperature must be a number from 0 to 2")
        .max(2, "temperature must be a number from 0 to 2")
        .optional(),
      topP: z
        .number({ error: "topP must be a number over 0 and at most 1" })
        .gt(0, "topP must be a number over 0 and at most 1")
        .max(1, "topP must be a number over 0 and at most 1")
        .optional(),
      maxOutputTokens: z
        .number({ error: `maxOutputTokens must be an integer from 1 to ${MAX_OUTPUT_TOKENS}` })
        .int(`maxOutputTokens must be an integer from 1 to ${MAX_OUTPUT_TOKENS}`)
        .min(1, `maxOutputTokens must be an integer from 1 to ${MAX_OUTPUT_TOKENS}`)
        .max(MAX_OUTPUT_TOKENS, `maxOutputTokens must be an integer from 1 to ${MAX_OUTPUT_TOKENS}`)
        .optional(),
    },
    BODY_OBJECT,
  )
  .superRefine((b, ctx) => {
    if (b.turnId !== undefined) {
      if (b.messages !== undefined && b.messages.length > 0)
        return ctx.addIssue(
          issue(() => "a continuation (turnId) takes no messages: post client results, then call /chat with the turnId", { path: ["messages"] }),
        );
      for (const key of TURN_FIELDS)
        if (b[key] !== undefined)
          return ctx.addIssue(issue(() => `${key} belongs to the turn that was opened; a continuation (turnId) cannot change it`, { path: [key] }));
      return;
    }
    if (b.model === undefined) return ctx.addIssue(issue(() => 'model is required: "provider/model" from models.providers', { path: ["model"] }));
    if (b.messages === undefined || b.messages.length === 0)
      return ctx.addIssue(issue(() => "messages must be a non-empty array of { role, content }", { path: ["messages"] }));
    if (!b.messages.some((m) => m.role === "user"))
      ctx.addIssue(issue(() => "messages must contain at least one user message", { path: ["messages"] }));
  })
  .openapi("ChatRequest", {
    description: "A new turn (`model`, `messages` and any field of `POST …/turns`) or a continuation (`turnId` alone).",
    example: { model: "openai/gpt-4.1-mini", messages: [{ role: "user", content: "How many open orders does ada@example.com have?" }] },
  });

// --- POST …/client-results

export const ClientResultBody = z
  .strictObject(
    {
      callId: z
        .string({ error: "callId must be the callId from pendingToolCalls" })
        .min(1, "callId must be the callId from pendingToolCalls")
        .max(128, "callId must be the callId from pendingToolCalls"),
      value: z.unknown().optional().openapi({ description: "The tool's result (any JSON value)." }),
      error: z
        .unknown()
        .optional()
        .openapi({
          type: "object",
          properties: { message: { type: "string", maxLength: 4096 } },
          required: ["message"],
          description: "The tool failed (the message is cut at 4096 characters).",
        }),
    },
    { error: (iss) => (iss.code === "invalid_type" ? "body must be { callId, value } or { callId, error: { message } }" : undefined) },
  )
  .superRefine((b, ctx) => {
    if ("value" in b === (b.error !== undefined)) return ctx.addIssue(issue(() => "give exactly one of value or error"));
    if (b.error !== undefined) {
      const e = b.error;
      if (e === null || typeof e !== "object" || Array.isArray(e) || typeof (e as { message?: unknown }).message !== "string")
        ctx.addIssue(issue(() => "error must be { message: string }", { path: ["error", "message"] }));
    }
  })
  .openapi("ClientResultRequest", { example: { callId: "call_0", value: { approved: true } } });

// --- POST …/approvals/:approvalId

export const ApprovalDecisionBody = z
  .strictObject(
    {
      decision: z.enum(["allow", "deny"], { error: 'decision must be "allow" or "deny"' }),
      reason: z
        .string({ error: "reason must be a string of at most 500 characters" })
        .max(500, "reason must be a string of at most 500 characters")
        .optional(),
    },
    { error: (iss) => (iss.code === "invalid_type" ? 'body must be { decision: "allow" | "deny", reason? }' : undefined) },
  )
  .openapi("ApprovalDecisionRequest", { example: { decision: "allow", reason: "checked by the on-call operator" } });
