/**
 * One connection to one MCP server over Streamable HTTP, for use inside workerd (issue 10).
 * Built on the MCP TypeScript SDK's `Client` and `StreamableHTTPClientTransport`.
 *
 * OWNERSHIP AND LIFETIME: `McpClient.connect()` returns an open client or a failure; the caller
 * owns the client and must `close()` it (safe twice; `await using` works). A plain Worker opens
 * one per request (it cannot use one request's I/O from another); a session Durable Object keeps
 * one per server across its requests (mcp-session-pool.ts). `usable` turns false for good when the
 * server ended the session (HTTP 404 to our `Mcp-Session-Id`), an answer passed the byte bound, or
 * the transport closed. After `close()` every operation answers `mcp_unreachable` ("closed").
 *
 * EVERY OPERATION takes `{ timeoutMs, signal? }` and never throws: it resolves to
 * `{ ok: true, value }` or a failure (codes in mcp-errors.ts). The deadline covers the whole
 * operation (all pages of a listing); when it passes or `signal` fires, the SDK request is
 * cancelled (`notifications/cancelled`) and the operation answers at once (mcp-deadline.ts).
 *
 * WORKERD NOTES (each one is why the code below is the way it is):
 * - The SDK validates tool output schemas with AJV by default, which compiles with
 *   `new Function` (refused by workerd): the client gets the SDK's `CfWorkerJsonSchemaValidator`.
 * - `tools/call` goes through `Client.request` with a loose result schema, not `callTool`: the
 *   SDK's schema strips block keys it does not know (the guest gets the original blocks), and
 *   `callTool` validates only against validators cached by `listTools` on the same connection,
 *   reset on every page: a client opened for one call would validate nothing. The caller passes
 *   the tool's `outputSchema` (from the turn's catalog) and it is checked here, whatever
 *   connection listed the tool, by the gateway's own validator (src/tools/schema-validator.ts:
 *   the server's schema is linted like any tool's, so its patterns cannot stall the isolate).
 * - The Worker's `fetch` is wrapped in a closure (never handed over unbound) that marks network
 *   failures as `McpNetworkError`, so they are classified by class, not by message, and bounds
 *   every answer's bytes (mcp-response-bound.ts: MAX_MCP_RESPONSE_BYTES).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { checkValue, compileSchema } from "../tools";
import { VERSION } from "../version";
import { logRecord } from "../observability";
import type { McpTarget } from "./mcp-config";
import { withDeadline, type McpCallOptions } from "./mcp-deadline";
import { mcpFailure, McpNetworkError, sanitizeServerText, type McpOutcome } from "./mcp-errors";
import { McpResponseBound } from "./mcp-response-bound";
import { loadMcpSdk, type McpSdk } from "./mcp-sdk";
import { collectPages, MCP_TOOL_LIST_LIMITS, type McpListLimits, type McpPage } from "./mcp-pagination";
import { valueTooDeep } from "../bridge";
import { MAX_JSON_DEPTH } from "../limits";
import {
  projectPromptsGet,
  projectPromptsList,
  projectResourcesList,
  projectResourcesRead,
  projectToolResult,
  type McpPromptsGetResult,
  type McpPromptsListResult,
  type McpResourcesListResult,
  type McpResourcesReadResult,
  type McpToolResult,
} from "./mcp-results";

/** `fetch` as the Worker has it; tests may pass a wrapper that observes requests. */
export type McpFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * `onListingStale`: the server said its tool list changed (`notifications/tools/list_changed`) or
 * answered a `tools/call` as an unknown tool; whoever cached its listing should list it again.
 * Called synchronously and often (a server may flood it): keep it O(1).
 */
export type McpConnectOptions = McpCallOptions & { fetch?: McpFetch; onListingStale?: () => void };

/**
 * Failures whose own request was answered HTTP 404 on our `Mcp-Session-Id`: the server ended the
 * session and, by the protocol, did not process the request, so it may be re-sent on a new
 * session. Kept beside the failure (failures stay plain data: nothing reaches a message).
 */
const SESSION_ENDED = new WeakSet<object>();

/** Did the server refuse this operation's request because the session had ended (not processed)? */
export function sessionEnded(failure: object): boolean {
  return SESSION_ENDED.has(failure);
}

/** A `tools/call` answer that says the tool does not exist (the SDK's servers: "Tool x not found"). */
const UNKNOWN_TOOL = /unknown tool|\btool\b[^\n]{0,200}\bnot found\b/i;

function saysUnknownTool(result: { isError?: boolean; content?: unknown[] }): boolean {
  if (result.isError !== true || !Array.isArray(result.content)) return false;
  const first = result.content.find((b): b is { type: "text"; text: string } => (b as { type?: unknown })?.type === "text");
  return first !== undefined && typeof first.text === "string" && UNKNOWN_TOOL.test(first.text.slice(0, 500));
}

/** One listed tool, as the catalog keeps it (JSON copy; `_meta`, icons and the like dropped). */
export type McpToolInfo = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
};

/** A server's tools and the bytes of their JSON (`jsonBytes`). */
export type McpListedTools = { tools: McpToolInfo[]; bytes: number };

/** Closing sends a best-effort `DELETE` of the MCP session; it gets this long. */
const TERMINATE_SESSION_MS = 1_000;

function toolInfo(tool: Record<string, unknown>): McpToolInfo {
  const info: McpToolInfo = { name: String(tool.name), inputSchema: tool.inputSchema as Record<string, unknown> };
  if (typeof tool.title === "string") info.title = tool.title;
  if (typeof tool.description === "string") info.description = tool.description;
  if (tool.outputSchema !== undefined) info.outputSchema = tool.outputSchema as Record<string, unknown>;
  if (tool.annotations !== undefined) info.annotations = tool.annotations as Record<string, unknown>;
  return JSON.parse(JSON.stringify(info)) as McpToolInfo;
}

const utf8 = new TextEncoder();

/** UTF-8 bytes of a tool's JSON: what it adds to the stored turn. */
export function jsonBytes(tool: McpToolInfo): number {
  return utf8.encode(JSON.stringify(tool)).length;
}

function networkFetch(base: McpFetch): McpFetch {
  return async (input, init) => {
    try {
      return await base(input, init);
    } catch (error) {
      if (init?.signal?.aborted) throw error;
      throw new McpNetworkError(error instanceof Error ? error.message : "fetch failed");
    }
  };
}

export class McpClient {
  private closed = false;
  /** The server ended our session (404 on its id) or the transport closed: never used again. */
  private ended = false;

  private constructor(
    /** The config name of the server, for messages. */
    readonly server: string,
    private readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
    /** Header values and the URL: redacted from any server text that reaches a message. */
    private readonly secrets: readonly string[],
    /** Bounds every answer's bytes; an answer past it ends the operation reading it. */
    private readonly bound: McpResponseBound,
    private readonly onListingStale: () => void,
    private readonly sdk: McpSdk,
  ) {}

  /** Open, its session alive and no answer past the byte bound: fit for another operation. */
  get usable(): boolean {
    return !this.closed && !this.ended && !this.bound.signal.aborted;
  }

  /** Open a session (`initialize`) with the target server. */
  static async connect(target: McpTarget, options: McpConnectOptions): Promise<McpOutcome<McpClient>> {
    let sdk: McpSdk;
    try {
      sdk = await loadMcpSdk();
    } catch (error) {
      logRecord("host_error", { where: "mcp.load_sdk", error });
      return mcpFailure("mcp_unreachable", { server: target.server, what: "connect" }, "failed: the MCP client could not be loaded");
    }
    const { Client, StreamableHTTPClientTransport, CfWorkerJsonSchemaValidator, ToolListChangedNotificationSchema } = sdk;
    const base: McpFetch = options.fetch ?? ((input, init) => fetch(input, init));
    const bound = new McpResponseBound();
    let self: McpClient | undefined;
    const sessionWatch: McpFetch = async (input, init) => {
      const response = await base(input, init);
      // The protocol's answer to a request on a session the server ended (or never had).
      if (response.status === 404 && new Headers(init?.headers).has("mcp-session-id") && self) self.ended = true;
      return response;
    };
    const transport = new StreamableHTTPClientTransport(target.url, {
      fetch: bound.wrap(networkFetch(sessionWatch)),
      requestInit: { headers: target.headers },
    });
    const client = new Client(
      { name: "codemode-edge", version: VERSION },
      { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    // Transport errors also reject the request they belong to; the rest (the optional GET
    // stream for server notifications) is not ours to report.
    client.onerror = () => {};
    const stale = options.onListingStale ?? (() => {});
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => stale());
    const secrets = [...Object.values(target.headers), target.url.href, target.url.search.slice(1)];
    const mcp = new McpClient(target.server, client, transport, secrets, bound, stale, sdk);
    self = mcp;
    client.onclose = () => {
      mcp.ended = true;
    };
    const connected = await withDeadline(
      { server: target.server, what: "connect" },
      options,
      secrets,
      async (signal) => {
        await client.connect(transport, { signal, timeout: options.timeoutMs });
        return { ok: true, value: mcp };
      },
      { bound: bound.signal },
    );
    if (!connected.ok) await mcp.close();
    return connected;
  }

  private async run<T>(
    what: string,
    options: McpCallOptions,
    work: (signal: AbortSignal) => Promise<McpOutcome<T>>,
    isToolCall = false,
  ): Promise<McpOutcome<T>> {
    const op = { server: this.server, what };
    if (this.closed) return mcpFailure("mcp_unreachable", op, "failed: the connection is closed");
    let ended = false;
    const watched = async (signal: AbortSignal) => {
      try {
        return await work(signal);
      } catch (error) {
        // This operation's own request met the 404: it was not processed (see SESSION_ENDED).
        if (error instanceof this.sdk.StreamableHTTPError && error.code === 404) ended = true;
        throw error;
      }
    };
    const r = await withDeadline(op, options, this.secrets, watched, { isToolCall, bound: this.bound.signal });
    if (!r.ok && ended) SESSION_ENDED.add(r);
    return r;
  }

  /**
   * `tools/list`, every page, within `limits` (default 1000 tools, 50 pages, MAX_MCP_TOOLS_BYTES of
   * tool JSON). A tool nested deeper than MAX_JSON_DEPTH refuses the listing, naming the tool: the
   * turn that stores it would overflow the host's stack copying it.
   */
  listTools(options: McpCallOptions, limits: McpListLimits = MCP_TOOL_LIST_LIMITS): Promise<McpOutcome<McpListedTools>> {
    return this.run("tools/list", options, async (signal) => {
      const listed = await collectPages(async (cursor): Promise<McpPage<McpToolInfo>> => {
        const page = await this.client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: options.timeoutMs });
        const deep = page.tools.find((t) => valueTooDeep(t));
        if (deep) {
          const name = sanitizeServerText(String(deep.name).slice(0, 128), this.secrets);
          return { refused: `lists tool ${JSON.stringify(name)}, nested deeper than ${MAX_JSON_DEPTH} levels; refused` };
        }
        const items = page.tools.map((t) => toolInfo(t as Record<string, unknown>));
        return { items, nextCursor: page.nextCursor, bytes: items.reduce((n, t) => n + jsonBytes(t), 0) };
      }, limits);
      if (!listed.ok) return mcpFailure("mcp_protocol_error", { server: this.server, what: "tools/list" }, listed.message);
      return { ok: true, value: { tools: listed.items, bytes: listed.bytes } };
    });
  }

  /**
   * `tools/call`. `outputSchema` is the tool's declared output schema (from the listing): when
   * given, a non-error result must carry `structuredContent` that satisfies it.
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: McpCallOptions & { outputSchema?: Record<string, unknown> },
  ): Promise<McpOutcome<McpToolResult>> {
    const what = `tools/call ${JSON.stringify(name.slice(0, 128))}`;
    return this.run(
      what,
      options,
      async (signal) => {
        const { ErrorCode, McpError, LooseCallToolResultSchema } = this.sdk;
        let raw;
        try {
          raw = await this.client.request({ method: "tools/call", params: { name, arguments: args } }, LooseCallToolResultSchema, {
            signal,
            timeout: options.timeoutMs,
          });
        } catch (error) {
          if (error instanceof McpError && error.code === ErrorCode.InvalidParams && UNKNOWN_TOOL.test(error.message.slice(0, 500)))
            this.onListingStale();
          throw error;
        }
        if (saysUnknownTool(raw)) this.onListingStale();
        const result = projectToolResult(raw);
        const broken = options.outputSchema && this.outputSchemaViolation(result, options.outputSchema);
        if (broken) return mcpFailure("mcp_protocol_error", { server: this.server, what }, broken);
        return { ok: true, value: result };
      },
      true,
    );
  }

  private outputSchemaViolation(result: McpToolResult, schema: Record<string, unknown>): string | undefined {
    if (result.isError === true) return undefined;
    if (result.structuredContent === undefined) return "failed: the tool declares an output schema but returned no structuredContent";
    // The shared validator: the server's schema is linted (patterns that backtrack badly are
    // refused; it runs in the host, outside any budget) and its patterns meet bounded strings.
    const usable = compileSchema(schema);
    if (!usable.ok) return `failed: the tool's declared output schema cannot be used (${sanitizeServerText(usable.message, this.secrets)})`;
    const check = checkValue(schema, result.structuredContent, true);
    return check.ok
      ? undefined
      : `failed: structuredContent does not match the tool's declared output schema (${sanitizeServerText(check.message, this.secrets)})`;
  }

  /** `resources/list`, one page. */
  listResources(cursor: string | undefined, options: McpCallOptions): Promise<McpOutcome<McpResourcesListResult>> {
    return this.run("resources/list", options, async (signal) => {
      const raw = await this.client.listResources(cursor === undefined ? {} : { cursor }, { signal, timeout: options.timeoutMs });
      return { ok: true, value: projectResourcesList(raw) };
    });
  }

  /** `resources/read`. */
  readResource(uri: string, options: McpCallOptions): Promise<McpOutcome<McpResourcesReadResult>> {
    return this.run(`resources/read ${JSON.stringify(uri.slice(0, 256))}`, options, async (signal) => {
      const raw = await this.client.readResource({ uri }, { signal, timeout: options.timeoutMs });
      return { ok: true, value: projectResourcesRead(raw) };
    });
  }

  /** `prompts/list`, one page. */
  listPrompts(cursor: string | undefined, options: McpCallOptions): Promise<McpOutcome<McpPromptsListResult>> {
    return this.run("prompts/list", options, async (signal) => {
      const raw = await this.client.listPrompts(cursor === undefined ? {} : { cursor }, { signal, timeout: options.timeoutMs });
      return { ok: true, value: projectPromptsList(raw) };
    });
  }

  /** `prompts/get`; MCP prompt arguments are strings. */
  getPrompt(name: string, args: Record<string, string>, options: McpCallOptions): Promise<McpOutcome<McpPromptsGetResult>> {
    return this.run(`prompts/get ${JSON.stringify(name.slice(0, 128))}`, options, async (signal) => {
      const raw = await this.client.getPrompt({ name, arguments: args }, { signal, timeout: options.timeoutMs });
      return { ok: true, value: projectPromptsGet(raw) };
    });
  }

  /** End the MCP session (best-effort `DELETE`, bounded) and the transport. Safe twice; never throws. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.transport.sessionId !== undefined) {
      let timer = 0;
      const bounded = new Promise<void>((resolve) => (timer = setTimeout(resolve, TERMINATE_SESSION_MS)));
      await Promise.race([this.transport.terminateSession().catch(() => {}), bounded]);
      clearTimeout(timer);
    }
    await this.client.close().catch(() => {});
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
