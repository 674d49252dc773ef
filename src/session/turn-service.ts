import { failed } from "../cell";
import type { CodeModeTelemetry } from "../code-mode";
import { findModel, type SessionLimits } from "../config";
import { objectResetMessage, sessionResetMessage, type SessionReply } from "../errors";
import { cellFields, cellTrace, debugFlags, logRecord, logTurnSurface, transportObserver } from "../observability";
import { costUsd } from "../providers";
import { QuotaExceeded } from "../quota";
import type { DeliveryRefusal } from "../runs";
import type { ToolPlugin } from "../tools";
import {
  clientResultSettlement,
  discoverMcp,
  planTurn,
  surfaceSize,
  turnSurface,
  type OpenTurnRequest,
  type TurnCounters,
  type TurnSpec,
} from "../turns";
import { buildTrajectory, chatMeta, runChat, type ChatPort, type ChatRecords, type ChatRequest, type ChatState, type Trajectory } from "../agent";
import { MAX_TURN_ROW_BYTES } from "../limits";
import { MCP_LISTINGS, McpSessionPool } from "../mcp";
import { CallRegistry } from "./call-registry";
import { OuterCalls } from "./outer-calls";
import { settleDirectClientCall } from "./direct-client-call";
import type { EncodedTurn, LostApproval, QuotaPort, SessionPorts, StoredTurn, TranscriptPort } from "./ports";
import { recoverFromReset } from "./reset-recovery";
import {
  answer,
  notFound,
  type ApprovalDecision,
  type CallTurn,
  type ClientResultAnswer,
  type ClientResultBody,
  type OpenTurnAnswer,
  type PendingApproval,
  type TrustedResult,
  type TurnDescription,
} from "./session-rpc";
import { settleToolCallClient } from "./tool-call-client";
import { catalogDigest, encodeTurn } from "./turn-row";
import { cancelChildren, childSettled, ChildRuns, rollUpChildren, type ChildOutcome } from "../swarm";

/**
 * The session's turns, behind the session Durable Object's RPC: opening a turn, one path for
 * every outer call (exec, wait, Tool Search, direct), client results, the trajectory view,
 * approvals, deletion and expiry. The object adapts storage and delegates; data flows one way,
 * from here down to the cell runner, and nothing below calls back into the object.
 */
export class TurnService {
  /** Calls running now (cancellation) and the cell queue. */
  readonly calls: CallRegistry;
  /** Turns a /chat call of this instance is driving (a stored `running` state without one here is stale). */
  private readonly driving = new Set<string>();
  private readonly plugins: readonly ToolPlugin[];
  /** The one path of outer calls (tools route, /mcp, the agent loop). */
  private readonly outer: OuterCalls;
  /** This object's MCP sessions, one per server identity, reused by every turn (mcp-session-pool.ts). */
  readonly mcpSessions = new McpSessionPool({ onListingStale: (key) => MCP_LISTINGS.stale(key) });

  /** Sub-agent turns this session runs for a Swarm parent, detached from the parent's call. */
  private readonly children: ChildRuns;

  constructor(
    plugins: readonly ToolPlugin[],
    private readonly p: SessionPorts,
  ) {
    this.plugins = plugins;
    this.children = new ChildRuns({
      chat: (t, s, req, requestId, stored) => this.chat(t, s, req, requestId, stored),
      store: p.kv,
      started: () => p.sessionStorage.ready,
      tellParent: async (tenantId, parentSessionId, childSessionId) => {
        const sessions = (p.env() as { SESSIONS?: DurableObjectNamespace }).SESSIONS as
          { idFromName(name: string): DurableObjectId; get(id: DurableObjectId): { childSettled(id: string): Promise<void> } } | undefined;
        await sessions?.get(sessions.idFromName(`${tenantId}:${parentSessionId}`)).childSettled(childSessionId);
      },
      now: () => p.clock().now(),
      armAlarm: (at) => p.armAlarm(at),
    });
    this.calls = new CallRegistry(() => this.p.clock());
    this.outer = new OuterCalls(plugins, p, this.calls, (turnId) => this.touched(turnId), this.mcpSessions);
  }

  /**
   * A new incarnation of the object: what an earlier one left unfinished (pending approvals, open
   * calls, running /chat turns) failed with it and is recorded as lost.
   */
  recover(lostApprovals: readonly LostApproval[]): void {
    recoverFromReset({
      lostApprovals,
      transcript: this.p.transcript,
      turn: (tenantId, turnId) => this.p.turns.get(tenantId, turnId),
      now: () => this.p.clock().now(),
    });
  }

  /** The HTTP client of `requestId` went away: cancel that call's active work. */
  cancelRequest(requestId: string): void {
    this.calls.cancel(requestId);
    // A sub-agent's /chat cancelled by its parent: nobody will read this turn's answer, so the
    // sub-agents its cells started stop too (each cancels its own in turn, down the tree).
    const childTurn = this.children.turnOf(requestId);
    if (childTurn !== undefined) cancelChildren(childTurn);
  }

  /**
   * `storedWith`: bytes the opener (a /chat call: its first messages) stores with the turn, admitted together.
   * `stored`: runs inside the transaction that stores the turn (a sub-agent's running record).
   */
  async openTurn(
    tenantId: string,
    sessionId: string,
    req: OpenTurnRequest,
    storedWith = 0,
    stored?: (turnId: string) => void,
  ): Promise<SessionReply<OpenTurnAnswer>> {
    const config = this.p.config();
    if (!config.ok) return { ok: false, reason: "invalid_config", message: config.error.message };
    const turnId = crypto.randomUUID();
    const mcp = await discoverMcp(config.config, req, this.p.env() as unknown as Record<string, unknown>, {
      pool: this.mcpSessions,
      now: () => this.p.clock().now(),
    });
    if (!mcp.ok) return { ok: false, reason: "invalid_request", message: mcp.message };
    const plan = planTurn(
      config.config,
      this.plugins,
      req,
      { turnId, tenantId, sessionId, counterScope: crypto.randomUUID(), now: this.p.clock().now() },
      { sandboxStarts: await this.sandboxStarts(), mcp: mcp.found },
    );
    if (!plan.ok) {
      logRecord("host_error", { where: "turn.surface_check", error: new Error(plan.message), tenant: tenantId, sessionId });
      return { ok: false, reason: "surface_rejected", message: plan.message };
    }
    const { spec, tools } = plan;
    const counters = { search: 0, describe: 0, call: 0 };
    const row = encodeTurn(spec, counters);
    if (row.bytes > MAX_TURN_ROW_BYTES) {
      return {
        ok: false,
        reason: "invalid_request",
        message: `this turn would store ${row.bytes} bytes (its tools' names, descriptions and schemas), over the bound of ${MAX_TURN_ROW_BYTES} bytes for one turn; attach fewer client tools or MCP servers`,
      };
    }
    // Before admission (no await may come between it and the write): the catalog's one stored copy
    // in this session is found by its digest, so a turn opened like an earlier one writes only its own fields.
    try {
      row.catalogDigest = await catalogDigest(spec.catalog);
    } catch (error) {
      // Without a digest the turn stores its catalog inline, as turns did before schema 14.
      logRecord("host_error", { where: "turn.catalog_digest", error, tenant: tenantId, sessionId });
    }
    const admitted = this.p.quota.admitTurn(row.charged, storedWith);
    if (!admitted.ok) return { ok: false, reason: "quota_exceeded", message: admitted.message };
    try {
      await this.storeTurn(spec, counters, row, stored);
    } catch (error) {
      // A refused write (SQLITE_TOOBIG, a full disk) is an answer, not a throw out of the RPC: nothing was stored.
      logRecord("host_error", { where: "turn.store", error, tenant: tenantId, sessionId });
      return {
        ok: false,
        reason: "internal_error",
        message: "the session could not store this turn (its storage refused the write); nothing was stored: retry",
      };
    }
    this.touched(turnId, { opened: true });
    logTurnSurface(
      debugFlags(this.p.env().CODEMODE_DEBUG),
      {
        tenant: tenantId,
        sessionId,
        turnId,
        codeModeEngaged: spec.codeModeEngaged,
        surface: spec.codeModeEngaged ? "code_mode" : (spec.surface?.kind ?? "none"),
        toolSearchMode: spec.toolSearch?.mode,
        fallbackFrom: spec.toolSearch?.fallbackFrom,
      },
      tools,
      config.config.redactPatterns,
    );
    return {
      ok: true,
      body: {
        turnId,
        codeModeEngaged: spec.codeModeEngaged,
        toolSearchEngaged: spec.toolSearch !== undefined,
        ...(spec.toolSearch ? { toolSearchMode: spec.toolSearch.mode } : {}),
        ...(spec.mcp
          ? {
              mcpServers: spec.mcp.servers.map((s) => ({
                name: s.name,
                namespace: s.ident,
                tools: s.tools,
                ...(s.error ? { error: s.error } : {}),
              })),
            }
          : {}),
        tools,
        surface: surfaceSize(spec.catalog, tools),
        telemetry: this.outer.telemetry(spec, counters),
      },
    };
  }

  /** Whether a VM can start in this isolate (Tool Search's code mode falls back when it cannot). */
  private async sandboxStarts(): Promise<boolean> {
    try {
      return await this.p.vms().pool.sandboxStarts();
    } catch (error) {
      logRecord("host_error", { where: "turn.sandbox_probe", error });
      return false;
    }
  }

  async describeTurn(tenantId: string, turnId: string): Promise<SessionReply<TurnDescription>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    const surface = turnSurface(turn.spec);
    if (!surface.ok) return { ok: false, reason: "surface_rejected", message: surface.message };
    return { ok: true, body: { turnId, codeModeEngaged: turn.spec.codeModeEngaged, tools: surface.tools } };
  }

  /**
   * `requestId` names this call so the Worker can cancel it when its client disconnects
   * (`cancelRequest`); an aborted exec or wait fails with `aborted` and its run is dropped.
   */
  async callTool(tenantId: string, turnId: string, toolName: string, input: unknown, requestId?: string): Promise<SessionReply<TrustedResult>> {
    const r = await this.outer.run(tenantId, turnId, toolName, input, { callId: `call_${crypto.randomUUID()}`, via: "route", requestId });
    return r.reply.ok ? { ok: true, body: { result: r.reply.body, untrusted: r.untrusted } } : r.reply;
  }

  /**
   * The session object was reset under an exec or wait (the platform's CPU or memory limit,
   * a deploy): this fresh instance reports that cell as failed. Parked runs are in storage
   * and untouched; a wait that was resuming one is never replayed (see `claim`).
   */
  async lostCall(tenantId: string, turnId: string, toolName: string, requestId?: string): Promise<SessionReply<unknown>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    const cell = turn.spec.codeModeEngaged
      ? toolName === "exec" || toolName === "wait"
      : turn.spec.toolSearch !== undefined && toolName === "tool_search_code";
    if (!cell) {
      return { ok: false, reason: "session_reset", message: `${sessionResetMessage({ while: toolName })}; its outcome is unknown` };
    }
    const message =
      `${objectResetMessage(toolName)}; ` +
      "what the cell did before is unknown and it cannot be resumed. Inspect state before retrying; parked runs are kept.";
    const body = failed(message, "internal_error", this.outer.telemetry(turn.spec, turn.counters));
    // The reset instance never wrote this cell's record: this one stands for it (its counters and duration are unknown).
    logRecord("cell", {
      ...cellFields(turn.spec, cellTrace(toolName as "exec" | "wait" | "tool_search_code", requestId), body),
      bridge: undefined,
      durationMs: undefined,
      lost: true,
    });
    return { ok: true, body };
  }

  async clientResult(tenantId: string, turnId: string, body: ClientResultBody): Promise<SessionReply<ClientResultAnswer>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    this.touched(turnId);
    // Accepted once per turn: the record outlives the run, so a repeat after the run settled is still a 409.
    if (this.p.turns.wasDelivered(turnId, body.callId))
      return { ok: false, reason: "conflict", message: `a result for ${body.callId} was already delivered` };
    try {
      return await this.acceptClientResult(turn, body);
    } catch (error) {
      // The session's storage cannot hold the result: refused whole (the call stays pending; free space and post it again).
      if (error instanceof QuotaExceeded) return { ok: false, reason: "quota_exceeded", message: error.message };
      throw error;
    }
  }

  private async acceptClientResult(turn: StoredTurn, body: ClientResultBody): Promise<SessionReply<ClientResultAnswer>> {
    const turnId = turn.spec.turnId;
    // A client tool Tool Search's tool_call handed out: its result is that tool_call's result.
    const handed = this.p.toolCallClients.get(turnId, body.callId);
    if (handed) {
      const { settlement, outcome } = this.p.transaction(() =>
        settleToolCallClient(
          {
            spec: turn.spec,
            store: this.p.toolCallClients,
            transcript: this.p.transcript,
            recordDelivered: (callId) => this.p.turns.recordDelivered(turnId, callId),
            now: () => this.p.clock().now(),
          },
          handed,
          body,
        ),
      );
      await this.outer.afterClientResult(turn.spec, handed.tool, handed.input, body.callId, true, settlement);
      return { ok: true, body: { accepted: true, result: outcome } };
    }
    // A client tool the model called directly in /chat: its result becomes the tool message the model reads next.
    const chat = this.p.transcript.state(turnId);
    const direct = chat?.status === "waiting" ? chat.pending.find((p) => p.runId === undefined && p.callId === body.callId) : undefined;
    if (chat && direct) {
      // One transaction: the tool message, the state and the delivery record, or none of them.
      const settled = this.p.transaction(() =>
        settleDirectClientCall(
          {
            spec: turn.spec,
            transcript: this.p.transcript,
            recordDelivered: (callId) => this.p.turns.recordDelivered(turnId, callId),
            now: () => this.p.clock().now(),
          },
          chat,
          direct,
          body,
        ),
      );
      await this.outer.afterClientResult(turn.spec, direct.tool, direct.input, body.callId, false, settled);
      return { ok: true, body: { accepted: true } };
    }
    // The declared outputSchema and the size cap are applied here; a violation reaches the guest as an error at wait.
    const tool = this.p.snapshots
      .runsOfTurn(turnId)
      .flatMap((s) => s.pending)
      .find((p) => p.kind === "client" && p.callId === body.callId);
    const settlement = clientResultSettlement(turn.spec, tool?.kind === "client" ? tool.tool : undefined, body);
    // The delivery record and the result are stored together or not at all; a resuming wait is handed the
    // result last, once both are stored.
    let refused: DeliveryRefusal | undefined;
    try {
      this.p.transaction(() => {
        this.p.turns.recordDelivered(turnId, body.callId);
        const delivered = this.p.runs.deliverClientResult(turnId, body.callId, settlement);
        if (!delivered.ok) {
          refused = delivered;
          throw new Error("rolled back: not delivered");
        }
      });
    } catch (error) {
      if (!refused) throw error;
    }
    if (refused) return { ok: false, reason: refused.reason === "already_delivered" ? "conflict" : "not_found", message: refused.message };
    this.p.transcript.event(turnId, this.p.clock().now(), "client_result", { invocationId: body.callId, ok: settlement.ok });
    if (tool?.kind === "client") await this.outer.afterClientResult(turn.spec, tool.tool, tool.input, body.callId, true, settlement);
    return { ok: true, body: { accepted: true } };
  }

  /** `POST …/chat`: the agent loop of one call (src/agent), as NDJSON events, on this session's turns and tool path. */
  /**
   * The /chat turn that handed out, or already took, any of `callIds` (call ids are random: at most
   * one turn knows them). A scan over the session's turns: the `/v1` facades' follow-ups carry no turn id.
   */
  callTurn(tenantId: string, callIds: string[]): SessionReply<CallTurn> {
    for (const turnId of this.p.turns.ids()) {
      if (!this.p.turns.get(tenantId, turnId)) continue;
      const state = this.p.transcript.state(turnId);
      if (!state) continue;
      const pending = state.pending.map((p) => p.callId);
      const delivered = callIds.filter((id) => this.p.turns.wasDelivered(turnId, id));
      if (delivered.length > 0 || callIds.some((id) => pending.includes(id)))
        return answer({
          turnId,
          status: state.status,
          pending,
          delivered,
          ...(state.historyKey !== undefined ? { historyKey: state.historyKey } : {}),
        });
    }
    return notFound("unknown tool call id");
  }

  /** `stored`: runs inside the transaction that stores the turn this /chat opens (openTurn). */
  async chat(
    tenantId: string,
    sessionId: string,
    req: ChatRequest,
    requestId: string,
    stored?: (turnId: string) => void,
  ): Promise<ReadableStream<Uint8Array>> {
    const fetch = this.p.providerFetch();
    const port: ChatPort = {
      env: {
        now: () => this.p.clock().now(),
        config: () => {
          const c = this.p.config();
          return c.ok ? c : { ok: false, message: c.error.message };
        },
        vars: this.p.env(),
        redaction: (spec) => this.outer.redaction(spec),
        observer: (ids) =>
          transportObserver(debugFlags(this.p.env().CODEMODE_DEBUG), ids, this.outer.redaction(this.p.turns.get(tenantId, ids.turnId)?.spec)),
        ...(fetch ? { fetch } : {}),
      },
      turns: {
        open: (t, s, r, storedWith) => this.openTurn(t, s, r, storedWith, stored),
        get: (t, id) => this.p.turns.get(t, id),
        surface: (spec) => turnSurface(spec),
        wasDelivered: (id, callId) => this.p.turns.wasDelivered(id, callId),
        runParked: (runId) => this.p.snapshots.state(runId) !== undefined,
        subAgents: (sessionId, turnId) => rollUpChildren(this.p.kv, sessionId, turnId),
      },
      tools: this.outer,
      records: chatRecords(this.p.transcript, this.p.quota),
      calls: { track: (id, r) => this.calls.track(id, r), driving: this.driving },
    };
    return runChat(port, tenantId, sessionId, req, requestId);
  }

  /** Swarm: start a sub-agent turn here, detached from the caller (idempotent by request id). */
  startChild(tenantId: string, sessionId: string, req: ChatRequest, requestId: string, parentSessionId: string): Promise<void> {
    return this.children.start(tenantId, sessionId, req, requestId, parentSessionId);
  }

  /** Swarm: a child of a turn here stored its result (a wake-up for whoever waits on it in this isolate). */
  childSettled(childSessionId: string): void {
    childSettled(childSessionId);
  }

  /** Swarm: a sub-agent turn's outcome by request id, waiting up to `waitMs` while it runs. */
  childResult(tenantId: string, requestId: string, waitMs: number): Promise<ChildOutcome> {
    return this.children.result(tenantId, requestId, waitMs);
  }

  /**
   * The turn's first write, all or nothing: a session that stored nothing before a failed write
   * stores nothing after it (its `DELETE` still answers 404), whatever the failure.
   */
  private async storeTurn(spec: TurnSpec, counters: TurnCounters, row: EncodedTurn, stored?: (turnId: string) => void): Promise<void> {
    const fresh = !this.p.sessionStorage.ready;
    try {
      this.p.transaction(() => {
        this.p.sessionStorage.ensure();
        this.p.turns.insert(spec, counters, row);
        stored?.(spec.turnId);
      });
      this.p.transcript.opened?.(spec.turnId);
      this.p.expiry.opened?.(spec.turnId, spec.createdAt);
    } catch (error) {
      // The transaction rolled the schema back; wiping also resets what `ensure` set up in memory.
      if (fresh) await this.p.sessionStorage.wipe();
      throw error;
    }
  }

  /** `GET …/turns/:turnId/trajectory`: outer calls with their nested calls, model calls, snapshot lifecycle, limits. */
  async trajectory(tenantId: string, turnId: string): Promise<SessionReply<Trajectory>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    const stored = this.p.transcript.state(turnId);
    // A stored `running` that no call of this instance drives was cut off by a reset: it is stopped.
    const state: ChatState | undefined =
      stored?.status === "running" && !this.driving.has(turnId) ? { ...stored, status: "stopped", lastError: "session_reset" } : stored;
    const config = this.p.config();
    const model = state && config.ok ? findModel(config.config, state.model) : undefined;
    const subAgents = await rollUpChildren(this.p.kv, turn.spec.sessionId, turnId);
    return {
      ok: true,
      body: buildTrajectory(this.p.transcript.events(turnId), {
        ...(subAgents ? { subAgents } : {}),
        turnId,
        codeModeEngaged: turn.spec.codeModeEngaged,
        status: state ? state.status : "open",
        droppedEvents: this.p.transcript.droppedEvents(turnId),
        ...(state
          ? { meta: chatMeta(state, { codeModeEngaged: turn.spec.codeModeEngaged, counters: turn.counters }, costUsd(state.usage, model?.cost)) }
          : {}),
        telemetry: this.outer.telemetry(turn.spec, turn.counters),
      }),
    };
  }

  async listApprovals(tenantId: string): Promise<SessionReply<PendingApproval[]>> {
    if (!this.p.sessionStorage.ready) return notFound("unknown session");
    return { ok: true, body: this.p.approvals.list(tenantId) };
  }

  async decideApproval(
    tenantId: string,
    approvalId: string,
    d: ApprovalDecision,
  ): Promise<SessionReply<{ approvalId: string; decision: "allow" | "deny" }>> {
    const r = this.p.approvals.decide(tenantId, approvalId, d);
    if (!r.ok) return { ok: false, reason: r.reason, message: r.message };
    return { ok: true, body: { approvalId, decision: d.decision } };
  }

  async deleteTurn(tenantId: string, turnId: string): Promise<SessionReply<{ telemetry: CodeModeTelemetry }>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    this.dropTurn(turnId);
    return { ok: true, body: { telemetry: this.outer.telemetry(turn.spec, turn.counters) } };
  }

  /** TTL expiry of parked runs, enforced by the alarm rather than only on the next wait; Swarm wake-ups a child still owes. */
  async alarm(): Promise<void> {
    if (!this.p.sessionStorage.ready) return;
    await this.children.retryWakes();
    const due = this.p.snapshots.expiredRunIds(this.p.clock().now()).map((runId) => this.p.snapshots.state(runId));
    this.p.runs.expire();
    for (const run of due) {
      if (run && !this.p.snapshots.state(run.runId))
        this.p.transcript.event(run.turnId, this.p.clock().now(), "snapshot", { event: "expired", runId: run.runId });
    }
    await this.expireIdle();
  }

  /** `DELETE /v1/sessions/:id`: cancel active work, then delete everything the session stored. */
  async deleteSession(): Promise<SessionReply<{ deleted: true }>> {
    if (!this.p.sessionStorage.ready) return notFound("unknown session");
    await this.clearSession();
    return { ok: true, body: { deleted: true } };
  }

  /** What the session stores against its quota (for tests and operators). */
  storageUsage(): { turns: number; bytes: number; limits: SessionLimits } {
    return { ...this.p.quota.usage(), limits: this.p.limits() };
  }

  /** Alarm: delete idle turns (with their parked runs), or the whole idle session; re-arm. */
  private async expireIdle(): Promise<void> {
    for (const turnId of this.p.expiry.dueTurns()) if (!this.calls.isActive(turnId)) this.dropTurn(turnId);
    if (this.p.expiry.sessionDue() && this.calls.idle) return this.clearSession();
    this.armIdleAlarm();
    await this.p.alarmsWritten();
  }

  /** Active cells fail with `aborted`; queued waits observe the teardown; then the storage goes. */
  private clearSession(): Promise<void> {
    this.calls.abortAll();
    for (const turnId of this.p.turns.ids()) this.dropTurn(turnId);
    return this.calls.serial(async () => {
      await this.p.sessionStorage.wipe();
      this.p.turns.forget();
    });
  }

  private dropTurn(turnId: string): void {
    this.calls.abortTurn(turnId);
    // Its sub-agents run in other session objects: asked to stop (best effort).
    cancelChildren(turnId);
    this.p.runs.closeTurn(turnId);
    this.p.transcript.deleteTurn(turnId);
    this.p.expiry.forgetTurn?.(turnId);
    this.p.toolCallClients.deleteTurn(turnId);
    this.p.approvals.deleteTurn(turnId);
    this.p.turns.delete(turnId);
  }

  /** Record activity; when it moved a deadline, make sure an alarm exists (sessions from older builds). */
  private touched(turnId: string, opts: { opened?: boolean } = {}): void {
    if (this.p.expiry.touch(turnId) || opts.opened) this.armIdleAlarm();
  }

  private armIdleAlarm(): void {
    if (!this.p.sessionStorage.ready) return;
    // Never in the past: a deadline skipped because its turn was busy is retried a second later.
    this.p.armAlarm(Math.max(this.p.expiry.nextDeadline(), this.p.clock().now() + 1000));
  }
}

/** The turn's records as the agent loop writes them: the transcript port, and room held in the quota. */
function chatRecords(t: TranscriptPort, quota: QuotaPort): ChatRecords {
  return {
    state: (turnId) => t.state(turnId),
    saveState: (turnId, state, promised) => t.saveState(turnId, state, promised),
    append: (turnId, message, promised) => t.append(turnId, message, promised),
    appendAll: (turnId, messages, promised) => t.appendAll(turnId, messages, promised),
    transcriptBytes: (turnId) => t.transcriptBytes(turnId),
    messages: (turnId) => t.messages(turnId),
    event: (turnId, at, kind, body) => t.event(turnId, at, kind, body),
    events: (turnId) => t.events(turnId),
    callEnded: (turnId, callId) => t.callEnded(turnId, callId),
    reserve: (bytes) => quota.reserve(bytes),
    ...(t.step ? { step: <T>(fn: () => T): T => t.step!(fn) } : {}),
  };
}
