import { DurableObject } from "cloudflare:workers";
import { objectResetMessage, sessionResetMessage } from "../../src/errors";
import { Catalog } from "../../src/catalog";
import type { CatalogEntry } from "../../src/catalog";
import { failed } from "../../src/cell";
import type { CodeModeResult, CodeModeTelemetry } from "../../src/code-mode";
import { findModel, loadGatewayConfig, SESSION_LIMIT_DEFAULTS, type SessionLimits } from "../../src/config";
import { cellFields, cellTrace, debugFlags, execLanguage, logRecord, logTurnSurface, type CellTrace } from "../../src/observability";
import { systemClock, type Clock } from "../../src/runtime";
import type { CellVms, VmPool } from "../../src/runtime";
import { RunLifecycle, type DeliveryRefusal } from "../../src/runs";
import { registryFromBinding, type ImageRegistryRpc } from "../../src/snapshot-store";
import { SnapshotCodec } from "../../src/snapshot-store";
import { SnapshotStore } from "../../src/snapshot-store";
import { taintedStore, type ToolDefinition, type ToolPlugin } from "../../src/tools";
import { afterClientResult, clientResultSettlement } from "../../src/turns";
import type { Settlement } from "../../src/bridge";
import { callDirectTool, cellEnvironment, execCell, isRestartSafe, type TurnDeps } from "../../src/turns";
import { defaultExecLanguage } from "../../src/turns";
import { turnTelemetry } from "../../src/turns";
import {
  callToolSearchTool,
  mcpToolDefinition,
  runToolSearchCode,
  toolSearchCellEnvironment,
  toolSearchCellSpec,
  toolSearchEnd,
} from "../../src/turns";
import type { ClientCallWaiting } from "../../src/turns";
import { McpServers } from "../../src/mcp";
import { isToolSearchControl, parseToolSearchInput, TOOL_SEARCH_CONTROLS } from "../../src/tool-search";
import { ToolCallClients } from "./tool-call-clients";
import { handOutToolCallClient, settleToolCallClient } from "./tool-call-client";
import type { TurnCounters, TurnSpec } from "../../src/turns";
import { discoverMcp, planTurn, turnSurface, type OpenTurnRequest } from "../../src/turns";
import {
  notFound,
  type ClientResultAnswer,
  type ClientResultBody,
  type OpenTurnAnswer,
  type SessionReply,
  type SessionRpc,
  type TurnSurface,
} from "../../src/session";
import { SessionExpiry } from "./session-expiry";
import { sessionKv } from "./session-kv";
import { SessionStorage } from "./session-storage";
import { Sql } from "../sql";
import { StorageQuota, TAINT_PREFIX } from "./storage-quota";
import { QuotaExceeded } from "../../src/quota";
import { encodeTurn, TurnStore, type EncodedTurn, type StoredTurn } from "./turn-store";
import { MAX_TURN_ROW_BYTES } from "../../src/limits";
import { OuterCallRecorder, resumedRunId, type CallScope, type OuterCall, type OuterReply } from "./outer-call-recorder";
import { TranscriptStore } from "./transcript-store";
import { runChat } from "./chat-run";
import { admitDirectClientCall, settleDirectClientCall } from "./direct-client-call";
import { registeredSecrets } from "./registered-secrets";
import { recoverFromReset } from "./reset-recovery";
import { buildTrajectory, chatMeta, type ChatState, type Trajectory } from "../../src/agent";
import { costUsd } from "../../src/providers";
import { APPROVALS_OFF } from "../../src/config";
import { admitExec, admitWait, execRan, toolCallPolicy, type ApprovalRequester, type ExecAdmission, type PluginHooks } from "../../src/policy";
import type { ToolCallEvent } from "../../src/tools";
import { ApprovalBroker } from "./approval-broker";
import type { ApprovalDecision, ChatRequest, PendingApproval, TrustedResult } from "../../src/session";
import { transportObserver } from "../../src/observability";

export type SessionEnv = {
  CODEMODE_CONFIG?: string;
  /** Debug switches (src/observability/debug-flags.ts); unset in production. */
  CODEMODE_DEBUG?: string;
  /** The image registry; without it every park is self-contained (larger, but survives deploys too). */
  PRISTINE_IMAGES?: DurableObjectNamespace<ImageRegistryRpc>;
};

/** Replies cross the RPC boundary as data; the HTTP layer maps them to responses. */

/**
 * The session Durable Object: a thin shell that owns the session's turns and parked runs,
 * runs its cells one at a time, and hands each concern to its module (turn planning, cell
 * runner, run lifecycle, stores).
 */
export function createSessionObject(plugins: readonly ToolPlugin[], pool: VmPool, clock: Clock = systemClock) {
  const definitions = new Map<string, ToolDefinition>();
  for (const p of plugins) for (const t of p.tools) definitions.set(`${p.id}\u0000${t.name}`, t);
  const resolve = (entry: CatalogEntry): ToolDefinition | undefined =>
    entry.pluginId !== undefined ? definitions.get(`${entry.pluginId}\u0000${entry.toolName}`) : undefined;
  // Every plugin's before/after_tool_call hooks run for every call of every turn, in registration order.
  const pluginHooks: PluginHooks[] = plugins.flatMap((p) => (p.hooks ? [{ pluginId: p.id, hooks: p.hooks }] : []));

  return class SessionDurableObject extends DurableObject<SessionEnv> implements SessionRpc {
    /** The gateway's clock (createGateway); a test may also swap it on one live instance. */
    clock: Clock = clock;
    /** Injected in tests (small limits); production reads `gateway.sessions` from the config. */
    limitsOverride: SessionLimits | undefined;
    private readonly turns: TurnStore;
    private readonly transcript: TranscriptStore;
    private readonly toolCallClients: ToolCallClients;
    private readonly approvals: ApprovalBroker;
    /** Turns a /chat call of this instance is driving (a stored `running` state without one here is stale). */
    private readonly driving = new Set<string>();
    /** Tests replace the provider transport of /chat (production: the platform's fetch). */
    providerFetch: typeof fetch | undefined;
    readonly snapshots: SnapshotStore;
    /** Encodes parked VMs against a base a later build can rebuild (its registry is replaced in tests). */
    readonly codec: SnapshotCodec;
    private readonly runs: RunLifecycle;
    private readonly active = new Map<string, Set<AbortController>>();
    private queue: Promise<unknown> = Promise.resolve();
    private readonly sessionStorage: SessionStorage;
    private readonly quota: StorageQuota;
    private readonly expiry: SessionExpiry;
    /** The isolate's VM pool and memory ledger (shared by every object here; read by tests). */
    readonly vms: CellVms;

    constructor(ctx: DurableObjectState, env: SessionEnv) {
      super(ctx, env);
      const owner = ctx.id.toString();
      // A new incarnation: VMs and waits of an earlier one that was reset mid-cell are dead,
      // and nobody else would give their room back.
      pool.ledger.releaseOwner(owner);
      this.vms = { pool, owner };
      const sql = new Sql(ctx.storage);
      const ready = () => this.sessionStorage.ready;
      this.quota = new StorageQuota({ sql, transaction: (fn) => ctx.storage.transactionSync(fn), limits: () => this.limits(), ready });
      this.expiry = new SessionExpiry({ sql, now: () => this.clock.now(), limits: () => this.limits() });
      this.approvals = new ApprovalBroker(sql, () => this.clock.now(), ready, this.quota);
      // The schema is created by the first turn, not here: an unknown session id stores nothing.
      this.sessionStorage = new SessionStorage(ctx.storage, sql, () => {
        this.quota.init(ctx.storage);
        this.expiry.init();
      });
      this.turns = new TurnStore(sql, ready, this.quota);
      this.transcript = new TranscriptStore(sql, ready, this.quota);
      this.toolCallClients = new ToolCallClients(sql, ready, this.quota);
      // Parked runs are counted where they are stored: the quota only checks their writes.
      this.snapshots = new SnapshotStore(sql, (bytes, write, what) => this.quota.grow(null, bytes, write, what));
      this.codec = new SnapshotCodec(env.PRISTINE_IMAGES ? registryFromBinding(env.PRISTINE_IMAGES) : null);
      this.runs = new RunLifecycle({
        store: this.snapshots,
        codec: this.codec,
        sessionTag: () => this.sessionStorage.runTag(),
        transaction: (fn) => ctx.storage.transactionSync(fn),
        now: () => this.clock.now(),
        scheduleExpiry: (at) => this.armAlarm(at),
      });
      // A new incarnation: what an earlier one left unfinished (pending approvals, open calls, running
      // /chat turns) failed with it and is recorded as lost.
      if (this.sessionStorage.ready)
        recoverFromReset({
          lostApprovals: this.approvals.init(),
          transcript: this.transcript,
          turn: (tenantId, turnId) => this.turns.get(tenantId, turnId),
          now: () => this.clock.now(),
        });
    }

    /**
     * Cells of one session run one at a time (input gates open while tools are awaited). `fn`
     * gets the time the work was admitted: queued work shares the execution deadline (seed 002).
     */
    private serial<T>(fn: (admittedAt: number) => Promise<T>): Promise<T> {
      const admittedAt = this.clock.now();
      const run = () => fn(admittedAt);
      const next = this.queue.then(run, run);
      // The queue only orders cells; each caller gets (and reports) its own failure.
      this.queue = next.catch(() => undefined);
      return next;
    }

    /** `storedWith`: bytes the opener (a /chat call: its first messages) stores with the turn, admitted together. */
    async openTurn(tenantId: string, sessionId: string, req: OpenTurnRequest, storedWith = 0): Promise<SessionReply<OpenTurnAnswer>> {
      const config = loadGatewayConfig(this.env);
      if (!config.ok) return { ok: false, reason: "invalid_config", message: config.error.message };
      const turnId = crypto.randomUUID();
      const mcp = await discoverMcp(config.config, req, this.env as unknown as Record<string, unknown>);
      if (!mcp.ok) return { ok: false, reason: "invalid_request", message: mcp.message };
      const plan = planTurn(
        config.config,
        plugins,
        req,
        { turnId, tenantId, sessionId, counterScope: crypto.randomUUID(), now: this.clock.now() },
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
      const admitted = this.quota.admitTurn(row.charged, storedWith);
      if (!admitted.ok) return { ok: false, reason: "quota_exceeded", message: admitted.message };
      await this.storeTurn(spec, counters, row);
      this.touched(turnId, { opened: true });
      logTurnSurface(
        debugFlags(this.env.CODEMODE_DEBUG),
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
        return await this.vms.pool.sandboxStarts();
      } catch (error) {
        logRecord("host_error", { where: "turn.sandbox_probe", error });
        return false;
      }
    }

    async describeTurn(tenantId: string, turnId: string): Promise<SessionReply<TurnSurface>> {
      const turn = this.turns.get(tenantId, turnId);
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
    private async runOuter(tenantId: string, turnId: string, toolName: string, input: unknown, call: OuterCall): Promise<OuterReply> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return { reply: notFound("unknown turn"), untrusted: false };
      this.touched(turnId);
      const started = this.clock.now();
      const recorder = this.recorder(turn.spec, call, toolName);
      recorder.start(input);
      // A directly called MCP tool's result is network-derived too (not only nested ones).
      if (
        !turn.spec.codeModeEngaged &&
        [...turn.spec.catalog.entries, ...turn.spec.catalog.direct].some(
          (e) => e.toolName === toolName && (e.source === "mcp" || resolve(e)?.networkDerived === true),
        )
      )
        recorder.untrusted = true;
      // A wait resumes a program that may already hold network-derived values from before it parked.
      const resumed = resumedRunId(toolName, input);
      if (typeof resumed === "string" && this.transcript.isUntrusted(resumed)) recorder.untrusted = true;
      const scope: CallScope = {
        requestId: call.requestId,
        parent: call.parent,
        callId: call.callId,
        activity: (n) => recorder.nested(n),
        taint: (source) => recorder.taint(source),
        untrusted: () => recorder.untrusted,
        record: (callId, tool, decision, reason) => recorder.policy(callId, tool, decision, reason),
        ...(call.onUpdate ? { onUpdate: call.onUpdate } : {}),
      };
      const reply = await this.dispatchTool(turn, toolName, input, scope);
      // The run may have been marked while this wait ran (a network-derived call of the parked run finished meanwhile).
      if (typeof resumed === "string" && this.transcript.isUntrusted(resumed)) recorder.untrusted = true;
      recorder.end(reply, input, this.clock.now() - started);
      return { reply, untrusted: recorder.untrusted };
    }

    /** The trajectory and log writer of one outer call. */
    private recorder(spec: TurnSpec, call: OuterCall, toolName: string): OuterCallRecorder {
      return new OuterCallRecorder(
        this.transcript,
        spec.turnId,
        call,
        toolName,
        () => this.clock.now(),
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
        const reply = await this.serial((admittedAt) =>
          this.withTurn(tenantId, turnId, trace, ctx, (t, signal) => this.exec(t, source, signal, { ...ctx, admittedAt })),
        );
        if (reply.ok) await execRan(pluginHooks, { ...event, input: source }, reply.body as { status?: unknown; error?: unknown });
        return this.logCell(spec, trace, reply);
      }
      if (spec.codeModeEngaged && toolName === "wait") {
        const trace = cellTrace("wait", requestId);
        const event: ToolCallEvent = { ...this.execEvent(spec, input, undefined), toolName: "wait", toolKind: "code_mode_wait" };
        const admitted = await this.admitOuter(spec, event, ctx, admitWait);
        if (!admitted.ok) return { ok: true, body: failed(admitted.message, admitted.code, this.telemetry(spec, turn.counters)) };
        const reply = await this.wait(turn, input, trace, ctx);
        if (reply.ok) await execRan(pluginHooks, event, reply.body as { status?: unknown; error?: unknown });
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
              : await this.serial((admittedAt) =>
                  this.withTurn(tenantId, turnId, trace, ctx, async (t, signal) => {
                    const env = toolSearchCellEnvironment(t.spec, t.counters, this.deps(t.spec, signal, { ...ctx, admittedAt }));
                    return this.runs.finish(toolSearchCellSpec(t.spec), await runToolSearchCode(env, input), env, { restartSafe: false });
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
                store: this.toolCallClients,
                parentCallId: ctx.callId ?? `call_${crypto.randomUUID()}`,
                policy: deps.policy?.({ nested: true }),
                context: deps.context,
                signal,
                now: () => this.clock.now(),
              },
              entry,
              args,
              telemetry,
            ),
          );
        });
      }
      const abort = this.track(turnId, requestId, ctx.parent);
      const before = JSON.stringify(turn.counters);
      try {
        const routed = await callDirectTool(spec, toolName, input, this.deps(spec, abort.signal, ctx), turn.counters);
        if (routed.kind === "not_found") return notFound(routed.message);
        return { ok: true, body: routed.result };
      } finally {
        this.untrack(turnId, abort, requestId);
        this.saveCountersIfMoved(tenantId, turnId, turn.counters, before);
      }
    }

    /**
     * The session object was reset under an exec or wait (the platform's CPU or memory limit,
     * a deploy): this fresh instance reports that cell as failed. Parked runs are in storage
     * and untouched; a wait that was resuming one is never replayed (see `claim`).
     */
    async lostCall(tenantId: string, turnId: string, toolName: string, requestId?: string): Promise<SessionReply<unknown>> {
      const turn = this.turns.get(tenantId, turnId);
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
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      this.touched(turnId);
      // Accepted once per turn: the record outlives the run, so a repeat after the run settled is still a 409.
      if (this.turns.wasDelivered(turnId, body.callId))
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
      const handed = this.toolCallClients.get(turnId, body.callId);
      if (handed) {
        const { settlement, outcome } = this.ctx.storage.transactionSync(() =>
          settleToolCallClient(
            {
              spec: turn.spec,
              store: this.toolCallClients,
              transcript: this.transcript,
              recordDelivered: (callId) => this.turns.recordDelivered(turnId, callId),
              now: () => this.clock.now(),
            },
            handed,
            body,
          ),
        );
        await this.afterClientResult(turn.spec, handed.tool, handed.input, body.callId, true, settlement);
        return { ok: true, body: { accepted: true, result: outcome } };
      }
      // A client tool the model called directly in /chat: its result becomes the tool message the model reads next.
      const chat = this.transcript.state(turnId);
      const direct = chat?.status === "waiting" ? chat.pending.find((p) => p.runId === undefined && p.callId === body.callId) : undefined;
      if (chat && direct) {
        // One transaction: the tool message, the state and the delivery record, or none of them.
        const settled = this.ctx.storage.transactionSync(() =>
          settleDirectClientCall(
            {
              spec: turn.spec,
              transcript: this.transcript,
              recordDelivered: (callId) => this.turns.recordDelivered(turnId, callId),
              now: () => this.clock.now(),
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
      const tool = this.snapshots
        .runsOfTurn(turnId)
        .flatMap((s) => s.pending)
        .find((p) => p.kind === "client" && p.callId === body.callId);
      const settlement = clientResultSettlement(turn.spec, tool?.kind === "client" ? tool.tool : undefined, body);
      // The delivery record and the result are stored together or not at all; a resuming wait is handed the
      // result last, once both are stored.
      let refused: DeliveryRefusal | undefined;
      try {
        this.ctx.storage.transactionSync(() => {
          this.turns.recordDelivered(turnId, body.callId);
          const delivered = this.runs.deliverClientResult(turnId, body.callId, settlement);
          if (!delivered.ok) {
            refused = delivered;
            throw new Error("rolled back: not delivered");
          }
        });
      } catch (error) {
        if (!refused) throw error;
      }
      if (refused) return { ok: false, reason: refused.reason === "already_delivered" ? "conflict" : "not_found", message: refused.message };
      this.transcript.event(turnId, this.clock.now(), "client_result", { invocationId: body.callId, ok: settlement.ok });
      if (tool?.kind === "client") await this.afterClientResult(turn.spec, tool.tool, tool.input, body.callId, true, settlement);
      return { ok: true, body: { accepted: true } };
    }

    /**
     * Plugins' after_tool_call hooks see a client tool's result as they see any call's, once it is
     * accepted (nested: called from a cell; otherwise called by the model directly). Observation only.
     */
    private async afterClientResult(
      spec: TurnSpec,
      tool: string,
      input: unknown,
      callId: string,
      nested: boolean,
      settled: Settlement,
    ): Promise<void> {
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
      const env = this.env as unknown as Record<string, unknown>;
      return runChat(
        {
          config: () => {
            const c = loadGatewayConfig(this.env);
            return c.ok ? c : { ok: false, message: c.error.message };
          },
          env,
          now: () => this.clock.now(),
          openTurn: (t, s, r, storedWith) => this.openTurn(t, s, r, storedWith),
          quota: this.quota,
          turn: (t, id) => this.turns.get(t, id),
          surface: (spec) => turnSurface(spec),
          runOuter: (t, id, name, input, call) => this.runOuter(t, id, name, input, call),
          notRun: (t, id, call, code) => {
            const turn = this.turns.get(t, id);
            if (turn) this.recorder(turn.spec, { callId: call.callId, via: "chat", requestId: call.requestId }, call.tool).notRun(call.input, code);
          },
          transcript: this.transcript,
          driving: this.driving,
          wasDelivered: (id, callId) => this.turns.wasDelivered(id, callId),
          track: (id, r) => this.track(id, r),
          untrack: (id, c, r) => this.untrack(id, c, r),
          redaction: (spec) => ({ secrets: this.secretsOf(spec), patterns: this.redactPatterns() }),
          observer: (ids) => {
            const spec = this.turns.get(tenantId, ids.turnId)?.spec;
            return transportObserver(debugFlags(this.env.CODEMODE_DEBUG), ids, { secrets: this.secretsOf(spec), patterns: this.redactPatterns() });
          },
          runParked: (runId) => this.snapshots.state(runId) !== undefined,
          admitClient: async (t, id, call, { callId, requestId, signal }) => {
            const turn = this.turns.get(t, id);
            const entry = turn?.spec.catalog.entries.find((e) => e.source === "client" && e.toolName === call.name);
            if (!turn || !entry) return { ok: true as const, input: call.input };
            const recorder = this.recorder(turn.spec, { callId, via: "chat", requestId }, call.name);
            const deps = this.deps(turn.spec, signal, { callId, record: (c, tool, decision, reason) => recorder.policy(c, tool, decision, reason) });
            return admitDirectClientCall(
              {
                entry,
                counters: turn.counters,
                saveCounters: () => this.turns.saveCounters(id, turn.counters),
                recorder,
                policy: deps.policy!({ nested: false }),
                context: { ...deps.context, signal, callId },
                now: () => this.clock.now(),
              },
              call.input,
            );
          },
          ...(this.providerFetch ? { fetch: this.providerFetch } : {}),
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
      const fresh = !this.sessionStorage.ready;
      try {
        this.ctx.storage.transactionSync(() => {
          this.sessionStorage.ensure();
          this.turns.insert(spec, counters, row);
        });
      } catch (error) {
        // The transaction rolled the schema back; wiping also resets what `ensure` set up in memory.
        if (fresh) await this.sessionStorage.wipe();
        throw error;
      }
    }

    /** `GET …/turns/:turnId/trajectory`: outer calls with their nested calls, model calls, snapshot lifecycle, limits. */
    async trajectory(tenantId: string, turnId: string): Promise<SessionReply<Trajectory>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      const stored = this.transcript.state(turnId);
      // A stored `running` that no call of this instance drives was cut off by a reset: it is stopped.
      const state: ChatState | undefined =
        stored?.status === "running" && !this.driving.has(turnId) ? { ...stored, status: "stopped", lastError: "session_reset" } : stored;
      const config = loadGatewayConfig(this.env);
      const model = state && config.ok ? findModel(config.config, state.model) : undefined;
      return {
        ok: true,
        body: buildTrajectory(this.transcript.events(turnId), {
          turnId,
          codeModeEngaged: turn.spec.codeModeEngaged,
          status: state ? state.status : "open",
          droppedEvents: this.transcript.droppedEvents(turnId),
          ...(state
            ? { meta: chatMeta(state, { codeModeEngaged: turn.spec.codeModeEngaged, counters: turn.counters }, costUsd(state.usage, model?.cost)) }
            : {}),
          telemetry: this.telemetry(turn.spec, turn.counters),
        }),
      };
    }

    async listApprovals(tenantId: string): Promise<SessionReply<PendingApproval[]>> {
      if (!this.sessionStorage.ready) return notFound("unknown session");
      return { ok: true, body: this.approvals.list(tenantId) };
    }

    async decideApproval(
      tenantId: string,
      approvalId: string,
      d: ApprovalDecision,
    ): Promise<SessionReply<{ approvalId: string; decision: "allow" | "deny" }>> {
      const r = this.approvals.decide(tenantId, approvalId, d);
      if (!r.ok) return { ok: false, reason: r.reason, message: r.message };
      return { ok: true, body: { approvalId, decision: d.decision } };
    }

    /** Values masked wherever the session stores or logs text: provider keys, MCP headers, gateway tokens. */
    private secretsOf(spec: TurnSpec | undefined): string[] {
      const config = loadGatewayConfig(this.env);
      return registeredSecrets(this.env as unknown as Record<string, unknown>, config.ok ? config.config : undefined, spec);
    }

    private redactPatterns(): RegExp[] {
      const config = loadGatewayConfig(this.env);
      return config.ok ? config.config.redactPatterns : [];
    }

    async deleteTurn(tenantId: string, turnId: string): Promise<SessionReply<{ telemetry: CodeModeTelemetry }>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      this.dropTurn(turnId);
      return { ok: true, body: { telemetry: this.telemetry(turn.spec, turn.counters) } };
    }

    /** TTL expiry of parked runs, enforced by the alarm rather than only on the next wait. */
    async alarm(): Promise<void> {
      if (!this.sessionStorage.ready) return;
      const due = this.snapshots.expiredRunIds(this.clock.now()).map((runId) => this.snapshots.state(runId));
      this.runs.expire();
      for (const run of due) {
        if (run && !this.snapshots.state(run.runId))
          this.transcript.event(run.turnId, this.clock.now(), "snapshot", { event: "expired", runId: run.runId });
      }
      await this.expireIdle();
    }

    /** `wait`: claimed before queueing, so a second concurrent wait for one runId fails at once. */
    private wait(turn: StoredTurn, input: unknown, trace: CellTrace, ctx: CallScope): Promise<SessionReply<unknown>> {
      const { spec } = turn;
      const claim = this.runs.claim(spec, input);
      if (!claim.ok)
        return Promise.resolve({ ok: true, body: failed(claim.message, claim.code ?? "invalid_input", this.telemetry(spec, turn.counters)) });
      trace.runId = claim.runId;
      const closing = this.telemetry(spec, turn.counters);
      return this.serial(async (admittedAt): Promise<SessionReply<unknown>> => {
        const reply = await this.withTurn(spec.tenantId, spec.turnId, trace, ctx, (t, signal) =>
          this.runs.resume(t.spec, claim.runId, (s, claimSignal, restartSafe) =>
            cellEnvironment(s, t.counters, this.deps(s, anySignal(signal, claimSignal), { ...ctx, admittedAt }), restartSafe),
          ),
        );
        // Torn down while this wait was queued: it observed the teardown.
        if (!reply.ok && reply.reason === "not_found") return { ok: true, body: failed("the code mode run was aborted", "aborted", closing) };
        return reply;
      }).finally(() => this.runs.release(claim.runId));
    }

    /**
     * `tool_search_code { runId }`: continue a cell parked on client calls, like `wait` does a
     * code-mode cell (same claim, queue and resume), with the Tool Search environment.
     */
    private resumeToolSearch(turn: StoredTurn, input: unknown, trace: CellTrace, ctx: CallScope): Promise<SessionReply<unknown>> {
      const spec = toolSearchCellSpec(turn.spec);
      const parsed = parseToolSearchInput("tool_search_code", input);
      if (!parsed.ok) return Promise.resolve({ ok: true, body: failed(parsed.message, "invalid_input", this.telemetry(spec, turn.counters)) });
      const claim = this.runs.claim(spec, input);
      if (!claim.ok)
        return Promise.resolve({ ok: true, body: failed(claim.message, claim.code ?? "invalid_input", this.telemetry(spec, turn.counters)) });
      trace.runId = claim.runId;
      const closing = this.telemetry(spec, turn.counters);
      return this.serial(async (admittedAt): Promise<SessionReply<unknown>> => {
        const reply = await this.withTurn(spec.tenantId, spec.turnId, trace, ctx, (t, signal) =>
          this.runs.resume(
            toolSearchCellSpec(t.spec),
            claim.runId,
            (s, claimSignal) => toolSearchCellEnvironment(t.spec, t.counters, this.deps(s, anySignal(signal, claimSignal), { ...ctx, admittedAt })),
            toolSearchEnd,
          ),
        );
        if (!reply.ok && reply.reason === "not_found") return { ok: true, body: failed("the tool_search_code run was aborted", "aborted", closing) };
        return reply;
      }).finally(() => this.runs.release(claim.runId));
    }

    private async exec(turn: StoredTurn, input: unknown, signal: AbortSignal, scope: CallScope): Promise<CodeModeResult> {
      const restartSafe = isRestartSafe(input);
      const env = cellEnvironment(turn.spec, turn.counters, this.deps(turn.spec, signal, scope), restartSafe);
      const end = await execCell(env, input);
      return this.runs.finish(turn.spec, end, env, { restartSafe });
    }

    /** Re-read the turn inside the queue, track its abort signal, persist counters after. */
    private async withTurn(
      tenantId: string,
      turnId: string,
      trace: CellTrace,
      ctx: CallScope,
      fn: (turn: StoredTurn, signal: AbortSignal) => Promise<CodeModeResult | ClientCallWaiting>,
    ): Promise<SessionReply<unknown>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      const { requestId } = trace;
      const abort = this.track(turnId, requestId, ctx.parent);
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
        this.untrack(turnId, abort, requestId);
        this.saveCountersIfMoved(tenantId, turnId, turn.counters, before);
      }
    }

    /** Only write when a counter moved: a write holds the reply until it is durable. */
    private saveCountersIfMoved(tenantId: string, turnId: string, counters: TurnCounters, before: string): void {
      if (JSON.stringify(counters) !== before && this.turns.get(tenantId, turnId)) this.turns.saveCounters(turnId, counters);
    }

    /** One `cell` record per exec/wait answered with a result (a 404 ran no cell). */
    private logCell(spec: TurnSpec, trace: CellTrace, reply: SessionReply<unknown>): SessionReply<unknown> {
      if (!reply.ok) return reply;
      const result = reply.body as CodeModeResult;
      const snapshotBytes = result.status === "waiting" ? this.snapshots.storedBytes(result.runId) : undefined;
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
      if (pluginHooks.length === 0 && approvals.require.length === 0) return { ok: true, input: event.input };
      const abort = this.track(spec.turnId, ctx.requestId, ctx.parent);
      try {
        const requester = this.requester(spec, ctx.callId);
        const admitted = await admit({ hooks: pluginHooks, approvals, requester, signal: abort.signal }, event);
        if (!admitted.ok) ctx.record?.(ctx.callId, event.toolName, admitted.decision, admitted.message);
        return admitted;
      } finally {
        this.untrack(spec.turnId, abort, ctx.requestId);
      }
    }

    /** Operator approvals for calls under the outer call `parentCallId` of the turn. */
    private requester(spec: TurnSpec, parentCallId: string | undefined): ApprovalRequester {
      return this.approvals.requester(
        { tenantId: spec.tenantId, turnId: spec.turnId, ...(parentCallId !== undefined ? { parentCallId } : {}) },
        { secrets: this.secretsOf(spec), patterns: this.redactPatterns() },
        () => this.turns.get(spec.tenantId, spec.turnId) !== undefined,
      );
    }

    /** What a call of the turn runs with: definitions, MCP servers, its context, policy (hooks, approvals), sinks. */
    private deps(spec: TurnSpec, signal: AbortSignal, scope: CallScope = {}): TurnDeps {
      const mcp = new McpServers(spec.mcp?.servers ?? [], this.env as unknown as Record<string, unknown>);
      const requester = this.requester(spec, scope.callId);
      return {
        ...(scope.activity ? { activity: scope.activity } : {}),
        ...(scope.taint ? { taint: scope.taint } : {}),
        ...(scope.onUpdate ? { onUpdate: scope.onUpdate } : {}),
        ...(scope.admittedAt !== undefined ? { admittedAt: scope.admittedAt } : {}),
        clock: this.clock,
        signal,
        vms: this.vms,
        mcp,
        resolve: (entry) => (entry.mcp ? mcpToolDefinition(entry, mcp) : resolve(entry)),
        policy: ({ nested, pause }) =>
          toolCallPolicy({ hooks: pluginHooks, approvals: spec.approvals ?? APPROVALS_OFF, requester, pause, nested, record: scope.record }),
        context: {
          tenantId: spec.tenantId,
          sessionId: spec.sessionId,
          turnId: spec.turnId,
          // Tool data keeps the taint of the call that wrote it (src/tools/taint-store.ts).
          store: taintedStore(sessionKv(this.ctx.storage, this.quota), sessionKv(this.ctx.storage, this.quota, TAINT_PREFIX), {
            untrusted: () => scope.untrusted?.() ?? false,
            taint: (source) => scope.taint?.(source),
          }),
          ...(spec.agentId !== undefined ? { agentId: spec.agentId } : {}),
          ...(spec.party ? { party: spec.party } : {}),
          ...(scope.callId !== undefined ? { callId: scope.callId } : {}),
        },
      };
    }

    private alarmWrites: Promise<void> = Promise.resolve();

    /** Ask for an alarm without waiting for it; a failed write is logged (the next request re-arms). */
    private armAlarm(at: number): void {
      this.scheduleAlarm(at).catch((error: unknown) => logRecord("host_error", { where: "alarm.schedule", error }));
    }

    /** Keep the earliest alarm. Serialized: a later request must never overwrite an earlier one. */
    private scheduleAlarm(at: number): Promise<void> {
      const next = this.alarmWrites.then(async () => {
        const current = await this.ctx.storage.getAlarm();
        if (current === null || current > at) await this.ctx.storage.setAlarm(at);
      });
      // The chain only orders writes; each caller sees (and logs) its own failure.
      this.alarmWrites = next.catch(() => undefined);
      return next;
    }

    // --- Storage lifecycle: session deletion, idle expiry, quotas (session-storage.ts, session-expiry.ts, storage-quota.ts)

    /** `DELETE /v1/sessions/:id`: cancel active work, then delete everything the session stored. */
    async deleteSession(): Promise<SessionReply<{ deleted: true }>> {
      if (!this.sessionStorage.ready) return notFound("unknown session");
      await this.clearSession();
      return { ok: true, body: { deleted: true } };
    }

    /** What the session stores against its quota (for tests and operators). */
    storageUsage(): { turns: number; bytes: number; limits: SessionLimits } {
      return { ...this.quota.usage(), limits: this.limits() };
    }

    /** Alarm: delete idle turns (with their parked runs), or the whole idle session; re-arm. */
    private async expireIdle(): Promise<void> {
      for (const turnId of this.expiry.dueTurns()) if (!this.active.has(turnId)) this.dropTurn(turnId);
      if (this.expiry.sessionDue() && this.active.size === 0) return this.clearSession();
      this.armIdleAlarm();
      await this.alarmWrites;
    }

    /** Active cells fail with `aborted`; queued waits observe the teardown; then the storage goes. */
    private clearSession(): Promise<void> {
      for (const set of this.active.values()) for (const c of set) c.abort();
      for (const turnId of this.turns.ids()) this.dropTurn(turnId);
      return this.serial(async () => {
        await this.sessionStorage.wipe();
        this.turns.forget();
      });
    }

    private dropTurn(turnId: string): void {
      for (const c of this.active.get(turnId) ?? []) c.abort();
      this.runs.closeTurn(turnId);
      this.transcript.deleteTurn(turnId);
      this.toolCallClients.deleteTurn(turnId);
      this.approvals.deleteTurn(turnId);
      this.turns.delete(turnId);
    }

    /** Record activity; when it moved a deadline, make sure an alarm exists (sessions from older builds). */
    private touched(turnId: string, opts: { opened?: boolean } = {}): void {
      if (this.expiry.touch(turnId) || opts.opened) this.armIdleAlarm();
    }

    private armIdleAlarm(): void {
      if (!this.sessionStorage.ready) return;
      // Never in the past: a deadline skipped because its turn was busy is retried a second later.
      this.armAlarm(Math.max(this.expiry.nextDeadline(), this.clock.now() + 1000));
    }

    private limits(): SessionLimits {
      if (this.limitsOverride) return this.limitsOverride;
      const config = loadGatewayConfig(this.env);
      return config.ok ? config.config.operations.sessions : SESSION_LIMIT_DEFAULTS;
    }

    /** The HTTP client of `requestId` went away: cancel that call's active work. */
    async cancelRequest(requestId: string): Promise<void> {
      const pending = this.cancelled.get(requestId);
      if (pending) pending.abort();
      else {
        // The call may not have reached the object yet; remember briefly so it starts aborted.
        const c = new AbortController();
        c.abort();
        this.cancelled.set(requestId, c);
        setTimeout(() => this.cancelled.delete(requestId), 60_000);
      }
    }

    private readonly cancelled = new Map<string, AbortController>();

    /** `parent`: the /chat call this one runs under; cancelling it cancels this call too. */
    private track(turnId: string, requestId?: string, parent?: AbortSignal): AbortController {
      const c = new AbortController();
      if (parent) {
        if (parent.aborted) c.abort();
        else {
          const onAbort = () => c.abort();
          parent.addEventListener("abort", onAbort, { once: true });
          this.detach.set(c, () => parent.removeEventListener("abort", onAbort));
        }
      }
      if (requestId !== undefined) {
        if (this.cancelled.get(requestId)?.signal.aborted) c.abort();
        this.cancelled.set(requestId, c);
      }
      let set = this.active.get(turnId);
      if (!set) this.active.set(turnId, (set = new Set()));
      set.add(c);
      return c;
    }

    /** Listeners on a parent (/chat) signal, removed when their call ends. */
    private readonly detach = new WeakMap<AbortController, () => void>();

    private untrack(turnId: string, c: AbortController, requestId?: string): void {
      this.detach.get(c)?.();
      this.detach.delete(c);
      if (requestId !== undefined && this.cancelled.get(requestId) === c) this.cancelled.delete(requestId);
      const set = this.active.get(turnId);
      set?.delete(c);
      if (set && set.size === 0) this.active.delete(turnId);
    }
  };
}

function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  return AbortSignal.any([a, b]);
}
