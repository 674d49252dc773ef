import type { CodeModePendingToolCall } from "../public";
import { errorOf, failure, networkError, success, type CodemodeError, type Result } from "./client-error";
import { sseEvents } from "./sse-events";
import type {
  ApprovalDecision,
  ApprovalDecisionAnswer,
  ChatAnswer,
  ChatBody,
  ChatEvent,
  ClientResultAnswer,
  ClientResultBody,
  CodeModeExecInput,
  CodeModeResult,
  DeleteSessionAnswer,
  DeleteTurnAnswer,
  HealthAnswer,
  OpenTurnAnswer,
  TurnDescription,
  OpenTurnBody,
  PendingApproval,
  Trajectory,
} from "./wire-types";

/** The fetch the client calls: the platform's by default (Node ≥ 18, browsers, Workers), or a service binding's. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export type ClientOptions = {
  /** The gateway's origin, e.g. `https://codemode.example.workers.dev` (a path prefix is kept). */
  baseUrl: string;
  /** A gateway token (`GATEWAY_TOKENS`): sent as `Authorization: Bearer …`. */
  token: string;
  fetch?: FetchLike;
  /** Sent with every request (e.g. a tracing header). */
  headers?: Record<string, string>;
};

/** Per call: an abort signal (a cancelled exec/wait or /chat cancels the gateway's running work too). */
export type CallOptions = { signal?: AbortSignal };

/** What the app answers for one client tool call of a cell: a JSON value, or an error the cell sees as a rejection. */
export type ClientCallOutcome = { value: unknown } | { error: { message: string } };

export type RunOptions = CallOptions & {
  /** Runs one client tool call a cell is waiting on; a throw is delivered as `{ error: { message } }`. */
  onClientCall?: (call: CodeModePendingToolCall) => ClientCallOutcome | Promise<ClientCallOutcome>;
  /** At most this many `wait`s (default 100): a cell that keeps yielding ends the loop with its last `waiting` result. */
  maxWaits?: number;
};

/** The finished result of a cell: `completed` or `failed` (or the last `waiting` one, past `maxWaits`). */
export type RunOutcome = CodeModeResult;

function isWaiting(r: unknown): r is Extract<CodeModeResult, { status: "waiting" }> {
  return (
    typeof r === "object" && r !== null && (r as { status?: unknown }).status === "waiting" && typeof (r as { runId?: unknown }).runId === "string"
  );
}

/**
 * A typed client of every gateway route but the facades and `/mcp` (docs/client.md). Methods never
 * throw: each answers `{ ok: true, value }` or `{ ok: false, error }` with the gateway's error code,
 * the HTTP status and message (and `retryAfter` where the gateway gave one). It needs only `fetch`,
 * `TextDecoder` and `ReadableStream`: it runs in Node ≥ 18, browsers and Workers.
 */
export class CodemodeClient {
  readonly #base: string;
  readonly #fetch: FetchLike;
  readonly #headers: Record<string, string>;

  constructor(options: ClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    // Unbound platform fetch throws "Illegal invocation" in browsers and Workers.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#headers = { ...options.headers, authorization: `Bearer ${options.token}` };
  }

  /** `GET /healthz` (no token needed; sent anyway). */
  health(opts?: CallOptions): Promise<Result<HealthAnswer>> {
    return this.#json("GET", "/healthz", undefined, opts);
  }

  /** `POST …/turns`: the turn's id and exactly what a model would be sent (`tools`). */
  openTurn(sessionId: string, body: OpenTurnBody = {}, opts?: CallOptions): Promise<Result<OpenTurnAnswer>> {
    return this.#json("POST", `${session(sessionId)}/turns`, body, opts);
  }

  /** `GET …/turns/:turnId`: an open turn's model-visible tools, as it opened (to take it up again). */
  describeTurn(sessionId: string, turnId: string, opts?: CallOptions): Promise<Result<TurnDescription>> {
    return this.#json("GET", turn(sessionId, turnId), undefined, opts);
  }

  /** `DELETE …/turns/:turnId`: the turn's final telemetry. */
  deleteTurn(sessionId: string, turnId: string, opts?: CallOptions): Promise<Result<DeleteTurnAnswer>> {
    return this.#json("DELETE", turn(sessionId, turnId), undefined, opts);
  }

  /**
   * `POST …/tools/:toolName`: any model-visible tool of the turn — `exec`/`wait` in code mode,
   * Tool Search's `tool_search`/`tool_describe`/`tool_call`/`tool_search_code`, or a direct tool
   * (its own result). The answer is what the tool returned, unwrapped.
   */
  callTool(sessionId: string, turnId: string, toolName: string, input: unknown = {}, opts?: CallOptions): Promise<Result<unknown>> {
    return this.#json("POST", `${turn(sessionId, turnId)}/tools/${encodeURIComponent(toolName)}`, input, opts);
  }

  /** `exec`: run a cell. A result is data: `completed`, `waiting` (client tools, a yield) or `failed`. */
  exec(sessionId: string, turnId: string, input: CodeModeExecInput, opts?: CallOptions): Promise<Result<CodeModeResult>> {
    return this.callTool(sessionId, turnId, "exec", input, opts) as Promise<Result<CodeModeResult>>;
  }

  /** `wait`: resume a parked cell (after its client results arrived, or after a yield). */
  wait(sessionId: string, turnId: string, runId: string, opts?: CallOptions): Promise<Result<CodeModeResult>> {
    return this.callTool(sessionId, turnId, "wait", { runId }, opts) as Promise<Result<CodeModeResult>>;
  }

  /** `POST …/client-results`: one client tool call's value or error. */
  deliver(sessionId: string, turnId: string, body: ClientResultBody, opts?: CallOptions): Promise<Result<ClientResultAnswer>> {
    return this.#json("POST", `${turn(sessionId, turnId)}/client-results`, body, opts);
  }

  /**
   * `exec`, then every `waiting` result followed to its end: each client tool call a cell waits on
   * is run by `onClientCall` and delivered, then the cell is resumed with `wait` (a yield is resumed
   * at once). Answers the `completed` or `failed` result; a gateway error stops the loop.
   */
  async runToCompletion(sessionId: string, turnId: string, input: CodeModeExecInput, opts: RunOptions = {}): Promise<Result<RunOutcome>> {
    return this.follow(sessionId, turnId, await this.exec(sessionId, turnId, input, opts), opts);
  }

  /** What `runToCompletion` does after `exec`: follows a result already in hand (of `exec`, `wait` or a direct call). */
  async follow(sessionId: string, turnId: string, first: Result<unknown>, opts: RunOptions = {}): Promise<Result<RunOutcome>> {
    let r = first;
    for (let waits = 0; r.ok && isWaiting(r.value) && waits < (opts.maxWaits ?? 100); waits++) {
      const waiting = r.value;
      for (const call of waiting.reason === "pending_tools" ? (waiting.pendingToolCalls ?? []) : []) {
        const outcome = await runClientCall(call, opts.onClientCall);
        const delivered = await this.deliver(sessionId, turnId, { callId: call.callId, ...outcome }, opts);
        if (!delivered.ok) return delivered;
      }
      r = await this.wait(sessionId, turnId, waiting.runId, opts);
    }
    return r as Result<RunOutcome>;
  }

  /** `GET …/trajectory`: every outer call with its nested calls, model calls, snapshots and limits hit. */
  trajectory(sessionId: string, turnId: string, opts?: CallOptions): Promise<Result<Trajectory>> {
    return this.#json("GET", `${turn(sessionId, turnId)}/trajectory`, undefined, opts);
  }

  /** `GET …/approvals`: the session's pending operator approvals. */
  approvals(sessionId: string, opts?: CallOptions): Promise<Result<PendingApproval[]>> {
    return this.#json("GET", `${session(sessionId)}/approvals`, undefined, opts);
  }

  /** `POST …/approvals/:approvalId`: allow or deny one (decided already: `conflict`). */
  decide(sessionId: string, approvalId: string, decision: ApprovalDecision, opts?: CallOptions): Promise<Result<ApprovalDecisionAnswer>> {
    return this.#json("POST", `${session(sessionId)}/approvals/${encodeURIComponent(approvalId)}`, decision, opts);
  }

  /** `DELETE /v1/sessions/:sessionId`: everything the session stored. */
  deleteSession(sessionId: string, opts?: CallOptions): Promise<Result<DeleteSessionAnswer>> {
    return this.#json("DELETE", session(sessionId), undefined, opts);
  }

  /** `POST …/chat` as JSON: the final answer (`completed`, or `waiting` on client tools). */
  chat(sessionId: string, body: ChatBody, opts?: CallOptions): Promise<Result<ChatAnswer>> {
    return this.#json("POST", `${session(sessionId)}/chat`, body, opts);
  }

  /**
   * `POST …/chat` as server-sent events: the turn's events as they happen, ending with one `done`
   * or `error` event. A request refused before the turn runs (bad body, unknown model or turn) is
   * an error result, not an event.
   */
  async chatEvents(sessionId: string, body: ChatBody, opts?: CallOptions): Promise<Result<AsyncGenerator<ChatEvent, void, undefined>>> {
    const res = await this.#send("POST", `${session(sessionId)}/chat`, body, opts, "text/event-stream");
    if (!res.ok) return res;
    if (!res.value.body) return failure({ code: "invalid_response", status: res.value.status, message: "an event stream without a body" });
    return success(sseEvents(res.value.body));
  }

  async #send(method: string, path: string, body: unknown, opts: CallOptions | undefined, accept = "application/json"): Promise<Result<Response>> {
    const headers: Record<string, string> = { ...this.#headers, accept };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await this.#fetch(this.#base + path, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(opts?.signal ? { signal: opts.signal } : {}),
      });
    } catch (error) {
      return failure(networkError(error));
    }
    return res.ok ? success(res) : failure(await errorOf(res));
  }

  async #json<T>(method: string, path: string, body: unknown, opts: CallOptions | undefined): Promise<Result<T>> {
    const res = await this.#send(method, path, body, opts);
    if (!res.ok) return res;
    const text = await res.value.text().catch((error: unknown) => error);
    if (typeof text !== "string") return failure(networkError(text));
    try {
      return success(JSON.parse(text) as T);
    } catch {
      return failure({ code: "invalid_response", status: res.value.status, message: `the answer is not JSON: ${text.slice(0, 200)}` });
    }
  }
}

/** One client tool call through the app's handler; no handler, or a throw, is the cell's rejection. */
async function runClientCall(call: CodeModePendingToolCall, handler: RunOptions["onClientCall"]): Promise<ClientCallOutcome> {
  if (!handler) return { error: { message: `no client tool handler for ${call.tool}` } };
  try {
    return await handler(call);
  } catch (error) {
    return { error: { message: error instanceof Error ? error.message : String(error) } };
  }
}

const session = (sessionId: string) => `/v1/sessions/${encodeURIComponent(sessionId)}`;
const turn = (sessionId: string, turnId: string) => `${session(sessionId)}/turns/${encodeURIComponent(turnId)}`;

export type { CodemodeError };
