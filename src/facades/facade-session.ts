import { readEvents, type ChatError, type ChatEvent, type ChatMeta, type PendingClientCall } from "../agent";
import { findModel, resolveModelAlias } from "../config";
import { GatewayError, sessionResetMessage, type ErrorCode } from "../errors";
import { loadValidators, SESSION_ID, SESSION_ID_RULE, type FacadeRequestContext, type GatewayEnv } from "../http";
import { logRecord } from "../observability";
import type { CallTurn, ChatRequest, SessionReply } from "../session";

/**
 * What the two wire formats have in common once parsed: a conversation as the client keeps it.
 * `calls` is an assistant message with tool calls (OpenAI `tool_calls`, Anthropic `tool_use`);
 * `results` the tool results answering one (OpenAI `role: "tool"` messages, Anthropic `tool_result` blocks).
 */
export type HistoryItem = (
  | { kind: "text"; role: "system" | "user" | "assistant"; content: string }
  | { kind: "calls"; content: string; calls: Array<{ id: string; name: string; input: unknown }> }
  | { kind: "results"; results: Array<{ id: string; content: string; isError: boolean }> }
) & {
  /** Where the client wrote it (`messages[2]`, Anthropic's `system`): a problem found later is reported there. */
  source: string;
};

/** One facade request in the shape the session understands, whatever its wire format. */
export type FacadeTurnRequest = {
  format: "openai" | "anthropic";
  model: string;
  history: HistoryItem[];
  /** The caller's tools, as `/chat` `clientTools` entries. */
  clientTools: unknown[];
  sampling: { temperature?: number; topP?: number; maxOutputTokens?: number };
  /** The request field (in the format's own spelling) a tool-result problem is reported on. */
  resultsParam: string;
};

export type { FacadeRequestContext };

/** How a facade turn ended: the final answer, client calls to run, or the failure (usage is the whole turn's). */
export type FacadeOutcome =
  | { kind: "answer"; text: string; meta: ChatMeta }
  | { kind: "calls"; calls: PendingClientCall[]; meta: ChatMeta }
  | { kind: "error"; error: ChatError };

/** What the formats render: the final answer's text as it streams, then how the turn ended. */
export type FacadeEvent = { type: "text"; delta: string } | { type: "end"; outcome: FacadeOutcome };

/** A turn that started: its session and turn ids (response headers) and its events. */
export type FacadeRun = { sessionId: string; turnId: string; events: AsyncGenerator<FacadeEvent> };

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The conversation before the gateway's own tool rounds: the trailing run of assistant tool-call
 * messages and tool results is what the gateway answered and the client ran; everything before it
 * is what the client said (the turn's opening).
 */
export function openingOf(history: readonly HistoryItem[]): HistoryItem[] {
  let end = history.length;
  while (end > 0 && history[end - 1]!.kind !== "text") end--;
  return history.slice(0, end);
}

/**
 * The session of a conversation: the `x-session-id` header, or one derived from the format, the
 * model and the conversation's root (its system messages and first user message), so every later
 * request of the same conversation — a follow-up with tool results included — reaches the same
 * session. The session object is named by tenant and session id: tenants never share one.
 */
export async function facadeSessionId(header: string | undefined, req: FacadeTurnRequest): Promise<string> {
  if (header !== undefined) {
    if (!SESSION_ID.test(header)) throw new GatewayError("invalid_request", `x-session-id must be ${SESSION_ID_RULE}`, "x-session-id");
    return header;
  }
  const firstUser = req.history.find((m) => m.kind === "text" && m.role === "user");
  const root = req.history.filter((m) => m.kind === "text" && m.role === "system");
  return `fx-${(await sha256Hex(JSON.stringify([req.format, req.model, root, firstUser ?? null]))).slice(0, 40)}`;
}

/** The key of a turn's opening: a follow-up whose opening hashes differently was edited, and starts a new turn. */
const historyKey = (req: FacadeTurnRequest): Promise<string> => sha256Hex(JSON.stringify([req.format, req.model, openingOf(req.history)]));

/** A tool result's text as the cell receives it: JSON when it parses as JSON, else the text itself. */
function resultValue(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/**
 * A new turn's messages: the conversation as text. Tool calls and results of earlier turns (or of
 * an edited history) are shown to the model as what they were, in brackets: `/chat` messages
 * carry text only, and those calls are not the new turn's to resume.
 */
function asMessages(history: readonly HistoryItem[]): Array<{ role: string; content: string }> {
  return history.map((m) => {
    if (m.kind === "text") return { role: m.role, content: m.content };
    if (m.kind === "calls") {
      const calls = m.calls.map((c) => `[tool call ${c.id}: ${c.name}(${JSON.stringify(c.input)})]`).join("\n");
      return { role: "assistant", content: m.content ? `${m.content}\n${calls}` : calls };
    }
    return { role: "user", content: m.results.map((r) => `[tool result ${r.id}${r.isError ? " (error)" : ""}: ${r.content}]`).join("\n") };
  });
}

function refuse(reply: Extract<SessionReply<unknown>, { ok: false }>, param?: string): never {
  throw new GatewayError(reply.reason, reply.message, param);
}

/**
 * Which turn a request drives. A history ending in tool results names its calls: the session's
 * turn that handed them out continues (each result delivered to its parked run) when the opening
 * is the one the turn was started with; an edited opening starts a new turn with the history as
 * text. Ids no turn of the session knows are a 404; a turn that already moved past them (a
 * replayed or stale follow-up) a 409; results missing for calls the turn waits on a 400.
 */
async function plan(ctx: FacadeRequestContext, stub: SessionStubLike, req: FacadeTurnRequest, key: string): Promise<ChatRequest> {
  const last = req.history.at(-1);
  if (last?.kind === "results") {
    const ids = last.results.map((r) => r.id);
    // Checked before anything is delivered: a second result for one call is not a retry, it is ambiguous.
    const twice = ids.find((id, i) => ids.indexOf(id) !== i);
    if (twice !== undefined)
      throw new GatewayError("invalid_request", `two tool results answer the call ${twice}: send one result per call`, req.resultsParam);
    const found = await stub.callTurn(ctx.tenant, ids);
    if (!found.ok) {
      if (found.reason === "not_found") throw unknownCalls(ids, req);
      refuse(found);
    }
    const turn: CallTurn = found.body;
    if (turn.historyKey === key) return resume(ctx, stub, req, turn, last.results);
  }
  const { validateChat } = await loadValidators();
  return inClientTerms(req, () =>
    validateChat({
      model: req.model,
      messages: asMessages(req.history),
      ...(req.clientTools.length > 0 ? { clientTools: req.clientTools } : {}),
      ...req.sampling,
    }),
  );
}

/** The request fields of the format for the `/chat` fields the facade fills in. */
const CLIENT_FIELDS: Record<string, string> = { topP: "top_p", maxOutputTokens: "max_tokens" };

/**
 * A refusal of the `/chat` request built from the client's names the client's own field: the
 * converted conversation has Anthropic's `system` as its first message and one message per run of
 * tool results, so `messages[i]` there is not the client's `messages[i]`.
 */
function inClientTerms<T>(req: FacadeTurnRequest, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof GatewayError) || error.path === undefined) throw error;
    const spelled = clientSpelling(req, error.path);
    if (spelled === undefined || spelled[0] === spelled[1]) throw error;
    const [head, mapped] = spelled;
    throw new GatewayError(error.code, error.message.split(head).join(mapped), mapped + error.path.slice(head.length), error.headers);
  }
}

/** The start of a `/chat` path and the client's spelling of it, when they differ. */
function clientSpelling(req: FacadeTurnRequest, path: string): [string, string] | undefined {
  const at = /^messages\[(\d+)\]/.exec(path);
  if (at) {
    const source = req.history[Number(at[1])]?.source;
    return source === undefined ? undefined : [at[0], source];
  }
  if (path === "clientTools") return ["clientTools", "tools"];
  // A client tool: OpenAI's `tools[i].function.name` / `.parameters`, Anthropic's `tools[i].name` / `.input_schema`.
  const tool = /^clientTools\[(\d+)\](\.parameters)?/.exec(path);
  if (tool) {
    const [head, i, parameters] = tool;
    if (req.format === "anthropic") return [head, `tools[${i}]${parameters ? ".input_schema" : ""}`];
    return [head, parameters || path !== head ? `tools[${i}].function${parameters ? ".parameters" : ""}` : `tools[${i}]`];
  }
  const field = /^[A-Za-z]+/.exec(path)?.[0];
  return field !== undefined && Object.hasOwn(CLIENT_FIELDS, field) ? [field, CLIENT_FIELDS[field]!] : undefined;
}

async function resume(
  ctx: FacadeRequestContext,
  stub: SessionStubLike,
  req: FacadeTurnRequest,
  turn: CallTurn,
  results: Array<{ id: string; content: string; isError: boolean }>,
): Promise<ChatRequest> {
  const ids = results.map((r) => r.id);
  const known = new Set([...turn.pending, ...turn.delivered]);
  const others = ids.filter((id) => !known.has(id));
  // Beside this turn's ids, ids no turn of the session handed out are the 404; another turn's are a stale request (409).
  if (others.length > 0) {
    const elsewhere = await stub.callTurn(ctx.tenant, others);
    if (!elsewhere.ok && elsewhere.reason === "not_found") throw unknownCalls(others, req);
  }
  const waitingOnOthers = turn.status === "waiting" && !turn.pending.some((id) => ids.includes(id));
  if (turn.status === "completed" || turn.status === "running" || waitingOnOthers || others.length > 0)
    throw new GatewayError(
      "conflict",
      `the tool results for ${ids.join(", ")} were already taken and the turn has moved on (a replayed or stale request); send the conversation with the latest assistant message`,
      req.resultsParam,
    );
  const missing = turn.pending.filter((id) => !ids.includes(id) && !turn.delivered.includes(id));
  if (turn.status === "waiting" && missing.length > 0)
    throw new GatewayError(
      "invalid_request",
      `tool results are missing for ${missing.join(", ")}: answer every call of the assistant message`,
      req.resultsParam,
    );
  for (const r of results) {
    if (turn.delivered.includes(r.id)) continue; // a retry of a follow-up whose continuation failed: taken already
    const body = r.isError ? { callId: r.id, error: { message: r.content } } : { callId: r.id, value: resultValue(r.content) };
    const taken = await stub.clientResult(ctx.tenant, turn.turnId, body);
    if (!taken.ok) refuse(taken, req.resultsParam);
  }
  return (await loadValidators()).validateChat({ turnId: turn.turnId });
}

type SessionStubLike = ReturnType<GatewayEnv["SESSIONS"]["get"]>;

function unknownCalls(ids: string[], req: FacadeTurnRequest): GatewayError {
  return new GatewayError("not_found", `unknown tool call id ${ids.join(", ")}: no turn of this conversation is waiting on it`, req.resultsParam);
}

/**
 * Starts (or continues) the turn behind one facade request and reads its first event: a request
 * refused before the loop ran (unknown model, bad history, a provider failure on the first call)
 * throws, so the route answers it as an HTTP error in its own envelope, streaming or not.
 */
export async function startFacadeTurn(
  ctx: FacadeRequestContext,
  req: FacadeTurnRequest,
  sessionHeader: string | undefined,
  signal: AbortSignal,
): Promise<FacadeRun> {
  // An alias answers as what it names (the model field of the answer, the session a conversation derives).
  req.model = resolveModelAlias(ctx.config, req.model);
  if (!findModel(ctx.config, req.model))
    throw new GatewayError(
      "not_found",
      `the model ${JSON.stringify(req.model)} does not exist: use a "provider/model" or an alias GET /v1/models lists`,
      "model",
    );
  const sessionId = await facadeSessionId(sessionHeader, req);
  const stub = ctx.sessions.get(ctx.sessions.idFromName(`${ctx.tenant}:${sessionId}`));
  const chatReq: ChatRequest = await plan(ctx, stub, req, await historyKey(req));
  if (chatReq.turnId === undefined) chatReq.historyKey = await historyKey(req);
  const cancel = () => ctx.waitUntil(stub.cancelRequest(ctx.requestId).catch(() => undefined));
  signal.addEventListener("abort", cancel, { once: true });
  let stream: ReadableStream<Uint8Array>;
  try {
    stream = await stub.chat(ctx.tenant, sessionId, chatReq, ctx.requestId);
  } catch (error) {
    logRecord("host_error", { where: "facade.chat_rpc", error, requestId: ctx.requestId, tenant: ctx.tenant });
    throw new GatewayError("session_reset", `${sessionResetMessage("before this call started")}; retry shortly`);
  }
  const events = readEvents(stream, signal);
  const first = await events.next().catch(() => undefined);
  if (!first || first.done) throw new GatewayError("session_reset", `${sessionResetMessage("during this call")}; retry`);
  if (first.value.type === "error") throw chatFailure(first.value.error);
  const turnId = first.value.type === "turn" ? first.value.turnId : "";
  return { sessionId, turnId, events: facadeEvents(events) };
}

/** A chat error as the edge's error (a provider 429 keeps its Retry-After). */
export function chatFailure(error: ChatError): GatewayError {
  const headers = error.retryAfterSeconds !== undefined ? { "retry-after": String(error.retryAfterSeconds) } : undefined;
  return new GatewayError(error.code as ErrorCode, error.message, undefined, headers);
}

/**
 * The turn's events as the client sees them: only the final assistant message. Text of a model
 * round that ended in tool calls (`exec`, `wait`) is the model talking to the gateway and is not
 * shown; a round's text is released when the round ends without tool calls.
 */
async function* facadeEvents(events: AsyncGenerator<ChatEvent>): AsyncGenerator<FacadeEvent> {
  let round: string[] = [];
  let shown = "";
  try {
    for await (const event of events) {
      if (event.type === "text") round.push(event.delta);
      else if (event.type === "assistant_turn") {
        if (event.finishReason !== "tool-calls") {
          for (const delta of round) yield { type: "text", delta };
          shown += round.join("");
        }
        round = [];
      } else if (event.type === "done") {
        const a = event.answer;
        if (a.status === "waiting") {
          yield { type: "end", outcome: { kind: "calls", calls: a.pendingToolCalls ?? [], meta: a.meta } };
          return;
        }
        const text = a.message?.content ?? "";
        // The final answer is the last round that said something: shown already, unless that round also called tools.
        if (shown === "" && text !== "") yield { type: "text", delta: text };
        yield { type: "end", outcome: { kind: "answer", text, meta: a.meta } };
        return;
      } else if (event.type === "error") {
        yield { type: "end", outcome: { kind: "error", error: event.error } };
        return;
      }
    }
  } catch {
    // The session object's stream broke (a reset): the turn is kept, the client may retry.
  }
  yield { type: "end", outcome: { kind: "error", error: { code: "session_reset", message: `${sessionResetMessage("during this call")}; retry` } } };
}

/** Reads a run to its end (the non-streaming answers). */
export async function settle(run: FacadeRun): Promise<FacadeOutcome> {
  for await (const event of run.events) if (event.type === "end") return event.outcome;
  return { kind: "error", error: { code: "internal_error", message: "the agent loop ended without an answer" } };
}

/** The `finish_reason` / `stop_reason` of an answer: a tool-call answer, a stop, or the turn's bound. */
export function stoppedAt(outcome: FacadeOutcome): "stop" | "tool_calls" | "length" {
  if (outcome.kind === "calls") return "tool_calls";
  if (outcome.kind === "answer" && (outcome.meta.stopReason === "max_assistant_turns" || outcome.meta.stopReason === "transcript_limit"))
    return "length";
  return "stop";
}

/** Headers every facade answer carries: where the conversation lives (the session routes read it). */
export function runHeaders(run: FacadeRun): Record<string, string> {
  return { "x-session-id": run.sessionId, "x-turn-id": run.turnId };
}

/** A `data:`-only SSE body with a comment line while quiet (proxies keep it open; SDK parsers skip comments). */
export function sseBody(produce: (send: (frame: string) => void) => Promise<void>, heartbeatMs = 15_000): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let beat: ReturnType<typeof setInterval> | null = null;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      let open = true;
      const send = (frame: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(frame));
        } catch {
          open = false;
        }
      };
      beat = setInterval(() => send(": keep-alive\n\n"), heartbeatMs);
      try {
        await produce(send);
      } finally {
        clearInterval(beat);
        if (open) controller.close();
      }
    },
    cancel() {
      clearInterval(beat);
    },
  });
}
