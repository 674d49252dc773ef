import { Catalog, type CatalogEntry } from "../catalog";
import type { Settlement } from "../bridge";
import { failed } from "../cell";
import type { CodeModeResult, CodeModeTelemetry } from "../code-mode";
import { APPROVALS_OFF, findModel, loadGatewayConfig, type SessionLimits } from "../config";
import { objectResetMessage, sessionResetMessage, type SessionReply } from "../errors";
import { McpServers } from "../mcp";
import { cellFields, cellTrace, debugFlags, execLanguage, logRecord, logTurnSurface, transportObserver, type CellTrace } from "../observability";
import { admitExec, admitWait, execRan, toolCallPolicy, type ApprovalRequester, type ExecAdmission, type PluginHooks } from "../policy";
import { costUsd } from "../providers";
import { QuotaExceeded } from "../quota";
import type { CellVms, Clock } from "../runtime";
import type { DeliveryRefusal, RunLifecycle } from "../runs";
import type { SnapshotStore } from "../snapshot-store";
import { isToolSearchControl, parseToolSearchInput, TOOL_SEARCH_CONTROLS } from "../tool-search";
import type { SessionStore, ToolCallEvent, ToolDefinition, ToolPlugin } from "../tools";
import {
  afterClientResult,
  callDirectTool,
  callToolSearchTool,
  cellEnvironment,
  clientResultSettlement,
  defaultExecLanguage,
  discoverMcp,
  execCell,
  isRestartSafe,
  mcpToolDefinition,
  planTurn,
  runToolSearchCode,
  toolSearchCellEnvironment,
  toolSearchCellSpec,
  toolSearchEnd,
  turnSurface,
  turnTelemetry,
  type ClientCallWaiting,
  type OpenTurnRequest,
  type TurnCounters,
  type TurnDeps,
  type TurnSpec,
} from "../turns";
import { buildTrajectory, chatMeta, type ChatRequest, type ChatState, type OuterCallContext, type OuterReply, type Trajectory } from "../agent";
import { MAX_TURN_ROW_BYTES } from "../limits";
import { CallRegistry } from "./call-registry";
import { runChat } from "./chat-run";
import { admitDirectClientCall, settleDirectClientCall } from "./direct-client-call";
import { OuterCallRecorder, resumedRunId, type CallScope } from "./outer-call-recorder";
import type {
  ApprovalsPort,
  EncodedTurn,
  ExpiryPort,
  LostApproval,
  QuotaPort,
  SessionStoragePort,
  StoredTurn,
  ToolCallClientsPort,
  TranscriptPort,
  TurnStorePort,
} from "./ports";
import { registeredSecrets } from "./registered-secrets";
import { recoverFromReset } from "./reset-recovery";
import {
  notFound,
  type ApprovalDecision,
  type ClientResultAnswer,
  type ClientResultBody,
  type OpenTurnAnswer,
  type PendingApproval,
  type TrustedResult,
  type TurnSurface,
} from "./session-rpc";
import { handOutToolCallClient, settleToolCallClient } from "./tool-call-client";
import { encodeTurn } from "./turn-row";

/**
 * What the turn service runs on: the session's stores (SQLite adapters in the Durable Object,
 * in-memory ones in tests), its transaction, its alarm, and what the object resolves per call
 * (environment, clock, VM pool, limits). Functions, not values, where a call must see the
 * current one.
 */
export type SessionPorts = {
  turns: TurnStorePort;
  transcript: TranscriptPort;
  toolCallClients: ToolCallClientsPort;
  approvals: ApprovalsPort;
  snapshots: SnapshotStore;
  runs: RunLifecycle;
  /** The session's storage quota (admission of turns, room held for later writes); the stores check their own writes. */
  quota: QuotaPort;
  expiry: ExpiryPort;
  sessionStorage: SessionStoragePort;
  /** Tool data (`ctx.store`), session-scoped and counted against the quota. */
  kv: SessionStore;
  /** Every write inside `fn` is durable together or not at all. */
  transaction<T>(fn: () => T): T;
  /** Ask for an alarm at `at` (the earliest asked for wins); `alarmsWritten` resolves once asked ones are stored. */
  armAlarm(at: number): void;
  alarmsWritten(): Promise<void>;
  env(): Record<string, unknown> & { CODEMODE_CONFIG?: string; CODEMODE_DEBUG?: string };
  clock(): Clock;
  vms(): CellVms;
  limits(): SessionLimits;
  /** The provider transport of /chat (absent: the platform's fetch). */
  providerFetch(): typeof fetch | undefined;
};

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
  private readonly definitions = new Map<string, ToolDefinition>();
  /** Every plugin's before/after_tool_call hooks run for every call of every turn, in registration order. */
  private readonly pluginHooks: PluginHooks[];

  constructor(
    plugins: readonly ToolPlugin[],
    private readonly p: SessionPorts,
  ) {
    this.plugins = plugins;
    for (const pl of plugins) for (const t of pl.tools) this.definitions.set(`${pl.id}\u0000${t.name}`, t);
    this.pluginHooks = plugins.flatMap((pl) => (pl.hooks ? [{ pluginId: pl.id, hooks: pl.hooks }] : []));
    this.calls = new CallRegistry(() => this.p.clock());
  }

  private resolve(entry: CatalogEntry): ToolDefinition | undefined {
    return entry.pluginId !== undefined ? this.definitions.get(`${entry.pluginId}\u0000${entry.toolName}`) : undefined;
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
  }

  /** `storedWith`: bytes the opener (a /chat call: its first messages) stores with the turn, admitted together. */
  async openTurn(tenantId: string, sessionId: string, req: OpenTurnRequest, storedWith = 0): Promise<SessionReply<OpenTurnAnswer>> {
    const config = loadGatewayConfig(this.p.env());
    if (!config.ok) return { ok: false, reason: "invalid_config", message: config.error.message };
    const turnId = crypto.randomUUID();
    const mcp = await discoverMcp(config.config, req, this.p.env() as unknown as Record<string, unknown>);
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
    const admitted = this.p.quota.admitTurn(row.charged, storedWith);
    if (!admitted.ok) return { ok: false, reason: "quota_exceeded", message: admitted.message };
    await this.storeTurn(spec, counters, row);
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
        telemetry: this.telemetry(spec, counters),
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

  async describeTurn(tenantId: string, turnId: string): Promise<SessionReply<TurnSurface>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    const surface = turnSurface(turn.spec);
    if (!surface.ok) return { ok: false, reason: "surface_rejected", message: surface.message };
    return { ok: true, body: { codeModeEngaged: turn.spec.codeModeEngaged, tools: surface.tools } };
  }

  /**
   * `requestId` names this call so the Worker can cancel it when its client disconnects
   * (`cancelRequest`); an aborted exec or wait fails with `aborted` and its run is dropped.
   */
  async callTool(tenantId: string, turnId: string, toolName: string, input: unknown, requestId?: string): Promise<SessionReply<unknown>> {
    const r = await this.runOuter(tenantId, turnId, toolName, input, { callId: `call_${crypto.randomUUID()}`, via: "route", requestId });
    return r.reply;
  }

  async callToolForModel(
    tenantId: string,
    turnId: string,
    toolName: string,
    input: unknown,
    requestId?: string,
  ): Promise<SessionReply<TrustedResult>> {
    const r = await this.runOuter(tenantId, turnId, toolName, input, { callId: `call_${crypto.randomUUID()}`, via: "route", requestId });
    return r.reply.ok ? { ok: true, body: { result: r.reply.body, untrusted: r.untrusted } } : r.reply;
  }

  /**
   * One outer (model-visible) tool call, from the tools route or the agent loop, recorded in the
   * turn's trajectory with its nested calls, snapshot lifecycle and limits hit.
   */
  private async runOuter(tenantId: string, turnId: string, toolName: string, input: unknown, call: OuterCallContext): Promise<OuterReply> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return { reply: notFound("unknown turn"), untrusted: false };
    this.touched(turnId);
    const started = this.p.clock().now();
    const recorder = this.recorder(turn.spec, call, toolName);
    recorder.start(input);
    // A directly called MCP tool's result is network-derived too (not only nested ones).
    if (
      !turn.spec.codeModeEngaged &&
      [...turn.spec.catalog.entries, ...turn.spec.catalog.direct].some(
        (e) => e.toolName === toolName && (e.source === "mcp" || this.resolve(e)?.networkDerived === true),
      )
    )
      recorder.untrusted = true;
    // A wait resumes a program that may already hold network-derived values from before it parked.
    const resumed = resumedRunId(toolName, input);
    if (typeof resumed === "string" && this.p.transcript.isUntrusted(resumed)) recorder.untrusted = true;
    const scope: CallScope = {
      requestId: call.requestId,
      parent: call.parent,
      callId: call.callId,
      activity: (n) => recorder.nested(n),
      taint: (source) => recorder.taint(source),
      record: (callId, tool, decision, reason) => recorder.policy(callId, tool, decision, reason),
      ...(call.onUpdate ? { onUpdate: call.onUpdate } : {}),
    };
    const reply = await this.dispatchTool(turn, toolName, input, scope);
    // The run may have been marked while this wait ran (a network-derived call of the parked run finished meanwhile).
    if (typeof resumed === "string" && this.p.transcript.isUntrusted(resumed)) recorder.untrusted = true;
    recorder.end(reply, input, this.p.clock().now() - started);
    return { reply, untrusted: recorder.untrusted };
  }

  /** The trajectory and log writer of one outer call. */
  private recorder(spec: TurnSpec, call: OuterCallContext, toolName: string): OuterCallRecorder {
    return new OuterCallRecorder(
      this.p.transcript,
      spec.turnId,
      call,
      toolName,
      () => this.p.clock().now(),
      { secrets: this.secretsOf(spec), patterns: this.redactPatterns() },
      { tenant: spec.tenantId, sessionId: spec.sessionId },
      new Set(spec.catalog.entries.filter((e) => e.source === "client").map((e) => e.toolName)),
    );
  }

  private async dispatchTool(turn: StoredTurn, toolName: string, input: unknown, ctx: CallScope): Promise<SessionReply<unknown>> {
    const { spec } = turn;
    const { tenantId, turnId } = spec;
    const { requestId } = ctx;
    if (spec.codeModeEngaged && toolName === "exec") {
      const language = execLanguage(input, defaultExecLanguage(spec.options.languages));
      const trace = cellTrace("exec", requestId, language);
      const event = this.execEvent(spec, input, language);
      const admitted = await this.admitOuter(spec, event, ctx, admitExec);
      if (!admitted.ok) return { ok: true, body: failed(admitted.message, admitted.code, this.telemetry(spec, turn.counters)) };
      const source = admitted.input;
      const reply = await this.calls.serial((admittedAt) =>
        this.withTurn(tenantId, turnId, trace, ctx, (t, signal) => this.exec(t, source, signal, { ...ctx, admittedAt })),
      );
      if (reply.ok) await execRan(this.pluginHooks, { ...event, input: source }, reply.body as { status?: unknown; error?: unknown });
      return this.logCell(spec, trace, reply);
    }
    if (spec.codeModeEngaged && toolName === "wait") {
      const trace = cellTrace("wait", requestId);
      const event: ToolCallEvent = { ...this.execEvent(spec, input, undefined), toolName: "wait", toolKind: "code_mode_wait" };
      const admitted = await this.admitOuter(spec, event, ctx, admitWait);
      if (!admitted.ok) return { ok: true, body: failed(admitted.message, admitted.code, this.telemetry(spec, turn.counters)) };
      const reply = await this.wait(turn, input, trace, ctx);
      if (reply.ok) await execRan(this.pluginHooks, event, reply.body as { status?: unknown; error?: unknown });
      return this.logCell(spec, trace, reply);
    }
    const ts = spec.toolSearch;
    if (ts && isToolSearchControl(toolName) && TOOL_SEARCH_CONTROLS[ts.mode].includes(toolName)) {
      const trace = cellTrace(toolName, requestId, toolName === "tool_search_code" ? "javascript" : undefined);
      if (toolName === "tool_search_code") {
        const runId = resumedRunId(toolName, input);
        const reply =
          runId !== undefined
            ? await this.resumeToolSearch(turn, input, trace, ctx)
            : await this.calls.serial((admittedAt) =>
                this.withTurn(tenantId, turnId, trace, ctx, async (t, signal) => {
                  const env = toolSearchCellEnvironment(t.spec, t.counters, this.deps(t.spec, signal, { ...ctx, admittedAt }));
                  return this.p.runs.finish(toolSearchCellSpec(t.spec), await runToolSearchCode(env, input), env, { restartSafe: false });
                }),
              );
        return this.logCell(spec, trace, reply);
      }
      return this.withTurn(tenantId, turnId, trace, ctx, (t, signal) => {
        const deps = this.deps(t.spec, signal, ctx);
        return callToolSearchTool(t.spec, t.counters, deps, toolName, input, (entry, args, telemetry) =>
          handOutToolCallClient(
            {
              spec: t.spec,
              store: this.p.toolCallClients,
              parentCallId: ctx.callId ?? `call_${crypto.randomUUID()}`,
              policy: deps.policy?.({ nested: true }),
              context: deps.context,
              signal,
              now: () => this.p.clock().now(),
            },
            entry,
            args,
            telemetry,
          ),
        );
      });
    }
    const abort = this.calls.track(turnId, requestId, ctx.parent);
    const before = JSON.stringify(turn.counters);
    try {
      const routed = await callDirectTool(spec, toolName, input, this.deps(spec, abort.signal, ctx), turn.counters);
      if (routed.kind === "not_found") return notFound(routed.message);
      return { ok: true, body: routed.result };
    } finally {
      abort.untrack();
      this.saveCountersIfMoved(tenantId, turnId, turn.counters, before);
    }
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
    const body = failed(message, "internal_error", this.telemetry(turn.spec, turn.counters));
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
      await this.afterClientResult(turn.spec, handed.tool, handed.input, body.callId, true, settlement);
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
      await this.afterClientResult(turn.spec, direct.tool, direct.input, body.callId, false, settled);
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
    if (tool?.kind === "client") await this.afterClientResult(turn.spec, tool.tool, tool.input, body.callId, true, settlement);
    return { ok: true, body: { accepted: true } };
  }

  /**
   * Plugins' after_tool_call hooks see a client tool's result as they see any call's, once it is
   * accepted (nested: called from a cell; otherwise called by the model directly). Observation only.
   */
  private async afterClientResult(spec: TurnSpec, tool: string, input: unknown, callId: string, nested: boolean, settled: Settlement): Promise<void> {
    const entry = spec.catalog.entries.find((e) => e.source === "client" && e.toolName === tool);
    if (!entry) return;
    const deps = this.deps(spec, new AbortController().signal, { callId });
    const result = settled.ok
      ? { ok: true as const, value: settled.text === undefined ? null : (JSON.parse(settled.text) as unknown) }
      : { ok: false as const, error: settled.message };
    await afterClientResult(entry, input, result, deps.policy!({ nested }), { ...deps.context, signal: deps.signal, callId });
  }

  /** `POST …/chat`: the agent loop of one call, as NDJSON events (chat-run.ts). */
  async chat(tenantId: string, sessionId: string, req: ChatRequest, requestId: string): Promise<ReadableStream<Uint8Array>> {
    const env = this.p.env() as unknown as Record<string, unknown>;
    return runChat(
      {
        config: () => {
          const c = loadGatewayConfig(this.p.env());
          return c.ok ? c : { ok: false, message: c.error.message };
        },
        env,
        now: () => this.p.clock().now(),
        openTurn: (t, s, r, storedWith) => this.openTurn(t, s, r, storedWith),
        quota: this.p.quota,
        turn: (t, id) => this.p.turns.get(t, id),
        surface: (spec) => turnSurface(spec),
        runOuter: (t, id, name, input, call) => this.runOuter(t, id, name, input, call),
        notRun: (t, id, call, code) => {
          const turn = this.p.turns.get(t, id);
          if (turn) this.recorder(turn.spec, { callId: call.callId, via: "chat", requestId: call.requestId }, call.tool).notRun(call.input, code);
        },
        transcript: this.p.transcript,
        driving: this.driving,
        wasDelivered: (id, callId) => this.p.turns.wasDelivered(id, callId),
        track: (id, r) => this.calls.track(id, r),
        redaction: (spec) => ({ secrets: this.secretsOf(spec), patterns: this.redactPatterns() }),
        observer: (ids) => {
          const spec = this.p.turns.get(tenantId, ids.turnId)?.spec;
          return transportObserver(debugFlags(this.p.env().CODEMODE_DEBUG), ids, { secrets: this.secretsOf(spec), patterns: this.redactPatterns() });
        },
        runParked: (runId) => this.p.snapshots.state(runId) !== undefined,
        admitClient: async (t, id, call, { callId, requestId, signal }) => {
          const turn = this.p.turns.get(t, id);
          const entry = turn?.spec.catalog.entries.find((e) => e.source === "client" && e.toolName === call.name);
          if (!turn || !entry) return { ok: true as const, input: call.input };
          const recorder = this.recorder(turn.spec, { callId, via: "chat", requestId }, call.name);
          const deps = this.deps(turn.spec, signal, { callId, record: (c, tool, decision, reason) => recorder.policy(c, tool, decision, reason) });
          return admitDirectClientCall(
            {
              entry,
              counters: turn.counters,
              saveCounters: () => this.p.turns.saveCounters(id, turn.counters),
              recorder,
              policy: deps.policy!({ nested: false }),
              context: { ...deps.context, signal, callId },
              now: () => this.p.clock().now(),
            },
            call.input,
          );
        },
        ...(this.p.providerFetch() ? { fetch: this.p.providerFetch() } : {}),
      },
      tenantId,
      sessionId,
      req,
      requestId,
    );
  }

  /**
   * The turn's first write, all or nothing: a session that stored nothing before a failed write
   * stores nothing after it (its `DELETE` still answers 404), whatever the failure.
   */
  private async storeTurn(spec: TurnSpec, counters: TurnCounters, row: EncodedTurn): Promise<void> {
    const fresh = !this.p.sessionStorage.ready;
    try {
      this.p.transaction(() => {
        this.p.sessionStorage.ensure();
        this.p.turns.insert(spec, counters, row);
      });
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
    const config = loadGatewayConfig(this.p.env());
    const model = state && config.ok ? findModel(config.config, state.model) : undefined;
    return {
      ok: true,
      body: buildTrajectory(this.p.transcript.events(turnId), {
        turnId,
        codeModeEngaged: turn.spec.codeModeEngaged,
        status: state ? state.status : "open",
        droppedEvents: this.p.transcript.droppedEvents(turnId),
        ...(state
          ? { meta: chatMeta(state, { codeModeEngaged: turn.spec.codeModeEngaged, counters: turn.counters }, costUsd(state.usage, model?.cost)) }
          : {}),
        telemetry: this.telemetry(turn.spec, turn.counters),
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

  /** Values masked wherever the session stores or logs text: provider keys, MCP headers, gateway tokens. */
  private secretsOf(spec: TurnSpec | undefined): string[] {
    const config = loadGatewayConfig(this.p.env());
    return registeredSecrets(this.p.env() as unknown as Record<string, unknown>, config.ok ? config.config : undefined, spec);
  }

  private redactPatterns(): RegExp[] {
    const config = loadGatewayConfig(this.p.env());
    return config.ok ? config.config.redactPatterns : [];
  }

  async deleteTurn(tenantId: string, turnId: string): Promise<SessionReply<{ telemetry: CodeModeTelemetry }>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    this.dropTurn(turnId);
    return { ok: true, body: { telemetry: this.telemetry(turn.spec, turn.counters) } };
  }

  /** TTL expiry of parked runs, enforced by the alarm rather than only on the next wait. */
  async alarm(): Promise<void> {
    if (!this.p.sessionStorage.ready) return;
    const due = this.p.snapshots.expiredRunIds(this.p.clock().now()).map((runId) => this.p.snapshots.state(runId));
    this.p.runs.expire();
    for (const run of due) {
      if (run && !this.p.snapshots.state(run.runId))
        this.p.transcript.event(run.turnId, this.p.clock().now(), "snapshot", { event: "expired", runId: run.runId });
    }
    await this.expireIdle();
  }

  /** `wait`: claimed before queueing, so a second concurrent wait for one runId fails at once. */
  private wait(turn: StoredTurn, input: unknown, trace: CellTrace, ctx: CallScope): Promise<SessionReply<unknown>> {
    const { spec } = turn;
    const claim = this.p.runs.claim(spec, input);
    if (!claim.ok)
      return Promise.resolve({ ok: true, body: failed(claim.message, claim.code ?? "invalid_input", this.telemetry(spec, turn.counters)) });
    trace.runId = claim.runId;
    const closing = this.telemetry(spec, turn.counters);
    return this.calls
      .serial(async (admittedAt): Promise<SessionReply<unknown>> => {
        const reply = await this.withTurn(spec.tenantId, spec.turnId, trace, ctx, (t, signal) =>
          this.p.runs.resume(t.spec, claim.runId, (s, claimSignal, restartSafe) =>
            cellEnvironment(s, t.counters, this.deps(s, anySignal(signal, claimSignal), { ...ctx, admittedAt }), restartSafe),
          ),
        );
        // Torn down while this wait was queued: it observed the teardown.
        if (!reply.ok && reply.reason === "not_found") return { ok: true, body: failed("the code mode run was aborted", "aborted", closing) };
        return reply;
      })
      .finally(() => this.p.runs.release(claim.runId));
  }

  /**
   * `tool_search_code { runId }`: continue a cell parked on client calls, like `wait` does a
   * code-mode cell (same claim, queue and resume), with the Tool Search environment.
   */
  private resumeToolSearch(turn: StoredTurn, input: unknown, trace: CellTrace, ctx: CallScope): Promise<SessionReply<unknown>> {
    const spec = toolSearchCellSpec(turn.spec);
    const parsed = parseToolSearchInput("tool_search_code", input);
    if (!parsed.ok) return Promise.resolve({ ok: true, body: failed(parsed.message, "invalid_input", this.telemetry(spec, turn.counters)) });
    const claim = this.p.runs.claim(spec, input);
    if (!claim.ok)
      return Promise.resolve({ ok: true, body: failed(claim.message, claim.code ?? "invalid_input", this.telemetry(spec, turn.counters)) });
    trace.runId = claim.runId;
    const closing = this.telemetry(spec, turn.counters);
    return this.calls
      .serial(async (admittedAt): Promise<SessionReply<unknown>> => {
        const reply = await this.withTurn(spec.tenantId, spec.turnId, trace, ctx, (t, signal) =>
          this.p.runs.resume(
            toolSearchCellSpec(t.spec),
            claim.runId,
            (s, claimSignal) => toolSearchCellEnvironment(t.spec, t.counters, this.deps(s, anySignal(signal, claimSignal), { ...ctx, admittedAt })),
            toolSearchEnd,
          ),
        );
        if (!reply.ok && reply.reason === "not_found") return { ok: true, body: failed("the tool_search_code run was aborted", "aborted", closing) };
        return reply;
      })
      .finally(() => this.p.runs.release(claim.runId));
  }

  private async exec(turn: StoredTurn, input: unknown, signal: AbortSignal, scope: CallScope): Promise<CodeModeResult> {
    const restartSafe = isRestartSafe(input);
    const env = cellEnvironment(turn.spec, turn.counters, this.deps(turn.spec, signal, scope), restartSafe);
    const end = await execCell(env, input);
    return this.p.runs.finish(turn.spec, end, env, { restartSafe });
  }

  /** Re-read the turn inside the queue, track its abort signal, persist counters after. */
  private async withTurn(
    tenantId: string,
    turnId: string,
    trace: CellTrace,
    ctx: CallScope,
    fn: (turn: StoredTurn, signal: AbortSignal) => Promise<CodeModeResult | ClientCallWaiting>,
  ): Promise<SessionReply<unknown>> {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return notFound("unknown turn");
    const { requestId } = trace;
    const abort = this.calls.track(turnId, requestId, ctx.parent);
    const before = JSON.stringify(turn.counters);
    trace.ranAt = performance.now();
    trace.before = { ...turn.counters };
    try {
      return { ok: true, body: await fn(turn, abort.signal) };
    } catch (error) {
      // A cell's failure is data, never an HTTP 500: whatever escaped is the gateway's fault.
      logRecord("host_error", { where: "cell.unexpected", error, requestId, tenant: tenantId, sessionId: turn.spec.sessionId, turnId });
      return { ok: true, body: failed("internal error in the code mode runtime", "internal_error", this.telemetry(turn.spec, turn.counters)) };
    } finally {
      abort.untrack();
      this.saveCountersIfMoved(tenantId, turnId, turn.counters, before);
    }
  }

  /** Only write when a counter moved: a write holds the reply until it is durable. */
  private saveCountersIfMoved(tenantId: string, turnId: string, counters: TurnCounters, before: string): void {
    if (JSON.stringify(counters) !== before && this.p.turns.get(tenantId, turnId)) this.p.turns.saveCounters(turnId, counters);
  }

  /** One `cell` record per exec/wait answered with a result (a 404 ran no cell). */
  private logCell(spec: TurnSpec, trace: CellTrace, reply: SessionReply<unknown>): SessionReply<unknown> {
    if (!reply.ok) return reply;
    const result = reply.body as CodeModeResult;
    const snapshotBytes = result.status === "waiting" ? this.p.snapshots.storedBytes(result.runId) : undefined;
    logRecord("cell", cellFields(spec, trace, result, { snapshotBytes }));
    return reply;
  }

  private telemetry(spec: TurnSpec, counters: TurnCounters): CodeModeTelemetry {
    return turnTelemetry(spec, new Catalog(spec.catalog), counters);
  }

  /** The outer code-mode exec as hooks see it (seed 002: `code_mode_exec`, with its language). */
  private execEvent(spec: TurnSpec, input: unknown, language: string | undefined): ToolCallEvent {
    return {
      toolName: "exec",
      toolKind: "code_mode_exec",
      ...(language === "javascript" || language === "typescript" ? { toolInputKind: language } : {}),
      input,
      nested: false,
      context: { tenantId: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, agentId: spec.agentId, party: spec.party },
    };
  }

  /** Hooks (and an approval, when asked for) before a cell starts or resumes; no hooks and no rule: admitted as is. */
  private async admitOuter(spec: TurnSpec, event: ToolCallEvent, ctx: CallScope, admit: typeof admitExec): Promise<ExecAdmission> {
    const approvals = spec.approvals ?? APPROVALS_OFF;
    if (this.pluginHooks.length === 0 && approvals.require.length === 0) return { ok: true, input: event.input };
    const abort = this.calls.track(spec.turnId, ctx.requestId, ctx.parent);
    try {
      const requester = this.requester(spec, ctx.callId);
      const admitted = await admit({ hooks: this.pluginHooks, approvals, requester, signal: abort.signal }, event);
      if (!admitted.ok) ctx.record?.(ctx.callId, event.toolName, admitted.decision, admitted.message);
      return admitted;
    } finally {
      abort.untrack();
    }
  }

  /** Operator approvals for calls under the outer call `parentCallId` of the turn. */
  private requester(spec: TurnSpec, parentCallId: string | undefined): ApprovalRequester {
    return this.p.approvals.requester(
      { tenantId: spec.tenantId, turnId: spec.turnId, ...(parentCallId !== undefined ? { parentCallId } : {}) },
      { secrets: this.secretsOf(spec), patterns: this.redactPatterns() },
      () => this.p.turns.get(spec.tenantId, spec.turnId) !== undefined,
    );
  }

  /** What a call of the turn runs with: definitions, MCP servers, its context, policy (hooks, approvals), sinks. */
  private deps(spec: TurnSpec, signal: AbortSignal, scope: CallScope = {}): TurnDeps {
    const mcp = new McpServers(spec.mcp?.servers ?? [], this.p.env() as unknown as Record<string, unknown>);
    const requester = this.requester(spec, scope.callId);
    return {
      ...(scope.activity ? { activity: scope.activity } : {}),
      ...(scope.taint ? { taint: scope.taint } : {}),
      ...(scope.onUpdate ? { onUpdate: scope.onUpdate } : {}),
      ...(scope.admittedAt !== undefined ? { admittedAt: scope.admittedAt } : {}),
      clock: this.p.clock(),
      signal,
      vms: this.p.vms(),
      mcp,
      resolve: (entry) => (entry.mcp ? mcpToolDefinition(entry, mcp) : this.resolve(entry)),
      policy: ({ nested, pause }) =>
        toolCallPolicy({ hooks: this.pluginHooks, approvals: spec.approvals ?? APPROVALS_OFF, requester, pause, nested, record: scope.record }),
      context: {
        tenantId: spec.tenantId,
        sessionId: spec.sessionId,
        turnId: spec.turnId,
        store: this.p.kv,
        ...(spec.agentId !== undefined ? { agentId: spec.agentId } : {}),
        ...(spec.party ? { party: spec.party } : {}),
        ...(scope.callId !== undefined ? { callId: scope.callId } : {}),
      },
    };
  }

  // --- Storage lifecycle: session deletion, idle expiry, quotas (session-storage.ts, session-expiry.ts, storage-quota.ts)

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
    this.p.runs.closeTurn(turnId);
    this.p.transcript.deleteTurn(turnId);
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

function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  return AbortSignal.any([a, b]);
}
