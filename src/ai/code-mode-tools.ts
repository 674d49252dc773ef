import { asSchema, jsonSchema, tool, type Tool, type ToolExecutionOptions, type ToolSet } from "ai";
import {
  CodemodeClient,
  type ClientCallOutcome,
  type CodemodeError,
  type FetchLike,
  type OpenTurnAnswer,
  type OpenTurnBody,
  type TurnDescription,
} from "../client";
import type { ClientToolSpec, CodeModePendingToolCall } from "../public";

export type CodeModeToolsOptions = {
  baseUrl: string;
  token: string;
  sessionId: string;
  /** The turn to open: agent, model (for activation), allow/deny, MCP servers, sender. Client tools come from `clientTools`. */
  turn?: Omit<OpenTurnBody, "clientTools">;
  /**
   * Take up a turn opened earlier (by an earlier request of the same chat) instead of opening one:
   * its tools are read back as it opened. Not with `turn`; `clientTools` then only run the calls,
   * under the names the turn declared.
   */
  turnId?: string;
  /**
   * The app's own tools (AI SDK `tool()`s with `execute`), declared to the turn as client tools:
   * the model's cells call them, the adapter runs their `execute` and delivers the result.
   */
  clientTools?: ToolSet;
  fetch?: FetchLike;
  /** At most this many `wait`s per model tool call (default 100). */
  maxWaits?: number;
};

/**
 * The turn and its tools (for the trajectory, or to delete the turn when the chat ends); `turn` as
 * opened, or as read back when `turnId` took one up.
 */
export type CodeModeTools<Turn extends TurnDescription = OpenTurnAnswer> = { tools: ToolSet; turnId: string; turn: Turn; client: CodemodeClient };

/** A gateway error, thrown inside a tool's `execute` (the AI SDK hands it to the model as the tool's error). */
export class CodemodeToolError extends Error {
  constructor(readonly error: CodemodeError) {
    super(`${error.code} (${error.status}): ${error.message}`);
    this.name = "CodemodeToolError";
  }
}

/**
 * Vercel AI SDK tools for code mode over the gateway (docs/client.md):
 * `streamText({ model, tools: await codeModeTools({ baseUrl, token, sessionId }) })`.
 */
export async function codeModeTools(options: CodeModeToolsOptions): Promise<ToolSet> {
  return (await openCodeModeTools(options)).tools;
}

/**
 * Opens a turn and returns one AI SDK tool per tool the gateway would send a model (`exec` and
 * `wait` in code mode; Tool Search's or direct tools otherwise), with the gateway's own
 * descriptions and JSON schemas. Each `execute` calls the gateway; a cell that waits on the app's
 * client tools has them run here and delivered, then is resumed, so the model sees one finished result.
 */
export async function openCodeModeTools(options: CodeModeToolsOptions & { turnId: string }): Promise<CodeModeTools<TurnDescription>>;
export async function openCodeModeTools(options: CodeModeToolsOptions & { turnId?: undefined }): Promise<CodeModeTools>;
export async function openCodeModeTools(options: CodeModeToolsOptions): Promise<CodeModeTools<TurnDescription>>;
export async function openCodeModeTools(options: CodeModeToolsOptions): Promise<CodeModeTools<TurnDescription>> {
  const client = new CodemodeClient({ baseUrl: options.baseUrl, token: options.token, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const appTools = options.clientTools ?? {};
  if (options.turnId !== undefined && options.turn !== undefined)
    throw new TypeError("openCodeModeTools: pass turnId (take up a turn) or turn (open one), not both");
  const opened =
    options.turnId !== undefined ? await client.describeTurn(options.sessionId, options.turnId) : await openTurn(client, options, appTools);
  if (!opened.ok) throw new CodemodeToolError(opened.error);
  const { turnId } = opened.value;
  const tools: ToolSet = {};
  for (const surfaceTool of opened.value.tools) {
    tools[surfaceTool.name] = tool({
      description: surfaceTool.description,
      inputSchema: jsonSchema(surfaceTool.parameters as Parameters<typeof jsonSchema>[0]),
      execute: async (input: unknown, execution: ToolExecutionOptions<unknown>) => {
        const signal = execution.abortSignal;
        const first = await client.callTool(options.sessionId, turnId, surfaceTool.name, input, { signal });
        const r = await client.follow(options.sessionId, turnId, first, {
          ...(signal ? { signal } : {}),
          ...(options.maxWaits !== undefined ? { maxWaits: options.maxWaits } : {}),
          onClientCall: (call) => runAppTool(appTools, call, execution),
        });
        if (!r.ok) throw new CodemodeToolError(r.error);
        return r.value;
      },
    });
  }
  return { tools, turnId, turn: opened.value, client };
}

async function openTurn(client: CodemodeClient, options: CodeModeToolsOptions, appTools: ToolSet) {
  const clientTools = await Promise.all(Object.entries(appTools).map(([name, t]) => declaredTool(name, t)));
  return client.openTurn(options.sessionId, { ...options.turn, ...(clientTools.length > 0 ? { clientTools } : {}) });
}

/** An app tool as the turn declares it: its name, description and input schema as JSON Schema. */
async function declaredTool(name: string, t: Tool): Promise<ClientToolSpec> {
  const parameters = t.inputSchema === undefined ? undefined : await asSchema(t.inputSchema).jsonSchema;
  return {
    name,
    ...(typeof t.description === "string" ? { description: t.description } : {}),
    ...(parameters !== undefined ? { parameters: parameters as ClientToolSpec["parameters"] } : {}),
  };
}

/** A cell's client tool call, run by the app's own `execute` (a streaming one's last value is its result). */
async function runAppTool(tools: ToolSet, call: CodeModePendingToolCall, execution: ToolExecutionOptions<unknown>): Promise<ClientCallOutcome> {
  const execute = tools[call.tool]?.execute;
  if (!execute) return { error: { message: `the app has no execute for client tool ${call.tool}` } };
  const out = await execute(call.input, { ...execution, toolCallId: call.callId });
  if (out !== null && typeof out === "object" && Symbol.asyncIterator in out) {
    let last: unknown;
    for await (const part of out as AsyncIterable<unknown>) last = part;
    return { value: last ?? null };
  }
  return { value: out ?? null };
}
