import type { DirectClientAdmission, NotRunCode } from "../agent";
import type { RedactionOptions } from "../observability";
import type { ModelToolCall } from "../providers";
import { admitDirectClientCall } from "./direct-client-call";
import { Catalog, type CatalogEntry } from "../catalog";
import type { Settlement } from "../bridge";
import { failed } from "../cell";
import type { CodeModeResult, CodeModeTelemetry } from "../code-mode";
import { APPROVALS_OFF, DEFAULT_SWARM_MAX_DEPTH, DEFAULT_SWARM_MODEL_CALLS, resolveSwarmMaxDepth, resolveSwarmModelCalls } from "../config";
import { type SessionReply } from "../errors";
import { McpServers, type McpSessionPool } from "../mcp";
import { cellFields, cellTrace, execLanguage, logRecord, type CellTrace } from "../observability";
import { admitExec, admitWait, execRan, toolCallPolicy, type ApprovalRequester, type ExecAdmission, type PluginHooks } from "../policy";
import { isToolSearchControl, parseToolSearchInput, TOOL_SEARCH_CONTROLS } from "../tool-search";
import { taintedStore, type SubAgentDepth, type ToolCallEvent, type ToolDefinition, type ToolPlugin } from "../tools";
import {
  afterClientResult,
  callDirectTool,
  callToolSearchTool,
  cellEnvironment,
  defaultExecLanguage,
  execCell,
  isRestartSafe,
  mcpToolDefinition,
  runToolSearchCode,
  toolSearchCellEnvironment,
  toolSearchCellSpec,
  toolSearchEnd,
  turnTelemetry,
  type ClientCallWaiting,
  type TurnCounters,
  type TurnDeps,
  type TurnSpec,
} from "../turns";
import { type OpenedCall, type OuterCallContext, type OuterReply } from "../agent";
import { CallRegistry } from "./call-registry";
import { OuterCallRecorder, resumedRunId, type CallScope } from "./outer-call-recorder";
import type { StoredTurn } from "./ports";
import { registeredSecrets } from "./registered-secrets";
import { subAgentTelemetry } from "../swarm";
import { notFound } from "./session-rpc";
import { handOutToolCallClient } from "./tool-call-client";

import type { SessionPorts } from "./ports";

/**
 * The one path of an outer (model-visible) call, whoever makes it — the tools route, `/mcp`, or
 * the agent loop: `exec` and `wait` (admitted by hooks and approvals, queued, run in a cell),
 * Tool Search's controls, and direct tools. Each call is recorded in the turn's trajectory with its
 * nested calls, policy decisions, snapshot lifecycle and limits hit; it never calls back up.
 */
export class OuterCalls {
  private readonly definitions = new Map<string, ToolDefinition>();
  /** Every plugin's before/after_tool_call hooks run for every call of every turn, in registration order. */
  private readonly pluginHooks: PluginHooks[];

  constructor(
    plugins: readonly ToolPlugin[],
    private readonly p: SessionPorts,
    private readonly calls: CallRegistry,
    /** Activity on a turn (its idle expiry moves). */
    private readonly touched: (turnId: string) => void,
    /** The object's MCP sessions: calls of every turn reuse them (absent: a client per call). */
    private readonly mcpSessions?: McpSessionPool,
  ) {
    for (const pl of plugins) for (const t of pl.tools) this.definitions.set(`${pl.id}\u0000${t.name}`, t);
    this.pluginHooks = plugins.flatMap((pl) => (pl.hooks ? [{ pluginId: pl.id, hooks: pl.hooks }] : []));
  }

  private resolve(entry: CatalogEntry): ToolDefinition | undefined {
    return entry.pluginId !== undefined ? this.definitions.get(`${entry.pluginId}\u0000${entry.toolName}`) : undefined;
  }

  /**
   * One outer (model-visible) tool call, from the tools route or the agent loop, recorded in the
   * turn's trajectory with its nested calls, snapshot lifecycle and limits hit.
   */
  async run(tenantId: string, turnId: string, toolName: string, input: unknown, call: OuterCallContext): Promise<OuterReply> {
    const { record, ...reply } = await this.open(tenantId, turnId, toolName, input, call).run();
    record();
    return reply;
  }

  /**
   * `run` in its three parts: the call's start goes on record now, `run()` dispatches it, and its
   * reply's `record()` puts its end on record (the agent loop writes the start and the end in the
   * storage steps of the model's reply and of the call's result, not in transactions of their own).
   */
  open(tenantId: string, turnId: string, toolName: string, input: unknown, call: OuterCallContext): OpenedCall {
    const turn = this.p.turns.get(tenantId, turnId);
    if (!turn) return { run: () => Promise.resolve({ reply: notFound("unknown turn"), untrusted: false, record: () => {} }) };
    this.touched(turnId);
    const started = this.p.clock().now();
    const recorder = this.recorder(turn.spec, call, toolName);
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
    try {
      recorder.start(input);
      if (typeof resumed === "string" && this.p.transcript.isUntrusted(resumed)) recorder.untrusted = true;
    } catch (error) {
      // Started in part: not left open.
      recorder.broke(0);
      throw error;
    }
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
    return {
      run: async () => {
        let reply: SessionReply<unknown>;
        try {
          reply = await this.dispatchTool(turn, toolName, input, scope);
          // The run may have been marked while this wait ran (a network-derived call of the parked run finished meanwhile).
          if (typeof resumed === "string" && this.p.transcript.isUntrusted(resumed)) recorder.untrusted = true;
        } catch (error) {
          recorder.broke(this.p.clock().now() - started);
          throw error;
        }
        const durationMs = this.p.clock().now() - started;
        return { reply, untrusted: recorder.untrusted, record: () => recorder.end(reply, input, durationMs) };
      },
    };
  }

  /** The trajectory and log writer of one outer call. */
  recorder(spec: TurnSpec, call: OuterCallContext, toolName: string): OuterCallRecorder {
    return new OuterCallRecorder({
      store: this.p.transcript,
      turnId: spec.turnId,
      call,
      toolName,
      now: () => this.p.clock().now(),
      redaction: { secrets: this.secretsOf(spec), patterns: this.redactPatterns() },
      ids: { tenant: spec.tenantId, sessionId: spec.sessionId },
      clientTools: new Catalog(spec.catalog).clientToolNames(),
    });
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
      if (!admitted.ok)
        return this.withSubAgents(spec, { ok: true, body: failed(admitted.message, admitted.code, this.telemetry(spec, turn.counters)) });
      const source = admitted.input;
      const reply = await this.withSubAgents(
        spec,
        await this.calls.serial((admittedAt) =>
          this.withTurn(tenantId, turnId, trace, ctx, (t, signal) => this.exec(t, source, signal, { ...ctx, admittedAt })),
        ),
      );
      if (reply.ok) await execRan(this.pluginHooks, { ...event, input: source }, reply.body as { status?: unknown; error?: unknown });
      return this.logCell(spec, trace, reply);
    }
    if (spec.codeModeEngaged && toolName === "wait") {
      const trace = cellTrace("wait", requestId);
      const event: ToolCallEvent = { ...this.execEvent(spec, input, undefined), toolName: "wait", toolKind: "code_mode_wait" };
      const admitted = await this.admitOuter(spec, event, ctx, admitWait);
      if (!admitted.ok)
        return this.withSubAgents(spec, { ok: true, body: failed(admitted.message, admitted.code, this.telemetry(spec, turn.counters)) });
      const reply = await this.withSubAgents(spec, await this.wait(turn, input, trace, ctx));
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
    const held = this.p.turns.hold(tenantId, turnId);
    if (!held) return notFound("unknown turn");
    const { counters } = held.turn;
    const abort = this.calls.track(turnId, requestId, ctx.parent);
    const before = JSON.stringify(counters);
    try {
      const routed = await callDirectTool(spec, toolName, input, this.deps(spec, abort.signal, ctx), counters);
      if (routed.kind === "not_found") return notFound(routed.message);
      return { ok: true, body: routed.result };
    } finally {
      abort.untrack();
      this.saveCountersIfMoved(tenantId, turnId, counters, before);
      held.release();
    }
  }

  /**
   * Plugins' after_tool_call hooks see a client tool's result as they see any call's, once it is
   * accepted (nested: called from a cell; otherwise called by the model directly). Observation only.
   */
  async afterClientResult(spec: TurnSpec, tool: string, input: unknown, callId: string, nested: boolean, settled: Settlement): Promise<void> {
    const entry = new Catalog(spec.catalog).clientTool(tool);
    if (!entry) return;
    const deps = this.deps(spec, new AbortController().signal, { callId });
    const result = settled.ok
      ? { ok: true as const, value: settled.text === undefined ? null : (JSON.parse(settled.text) as unknown) }
      : { ok: false as const, error: settled.message };
    await afterClientResult(entry, input, result, deps.policy!({ nested }), { ...deps.context, signal: deps.signal, callId });
  }

  /** Values masked wherever the session stores or logs text: provider keys, MCP headers, gateway tokens. */
  secretsOf(spec: TurnSpec | undefined): readonly string[] {
    const config = this.p.config();
    return registeredSecrets(this.p.env() as unknown as Record<string, unknown>, config.ok ? config.config : undefined, spec);
  }

  /** `tools.swarm.maxModelCalls` of the turn's agent (Swarm's per-turn bound on its children's model calls). */
  private subAgentModelCalls(spec: TurnSpec): number {
    const config = this.p.config();
    return config.ok ? resolveSwarmModelCalls(config.config, spec.agentId) : DEFAULT_SWARM_MODEL_CALLS;
  }

  /**
   * The turn's place in its Swarm tree: a sub-agent's as its parent set it (the top-level turn's
   * `tools.swarm.maxDepth` governs the whole tree), else a top-level turn's own setting.
   */
  private subAgentDepth(spec: TurnSpec): SubAgentDepth {
    if (spec.subAgent) return spec.subAgent;
    const config = this.p.config();
    return { depth: 0, maxDepth: config.ok ? resolveSwarmMaxDepth(config.config, spec.agentId) : DEFAULT_SWARM_MAX_DEPTH };
  }

  redactPatterns(): RegExp[] {
    const config = this.p.config();
    return config.ok ? config.config.redactPatterns : [];
  }

  /** `wait`: claimed before queueing, so a second concurrent wait for one runId fails at once. */
  private wait(turn: StoredTurn, input: unknown, trace: CellTrace, ctx: CallScope): Promise<SessionReply<unknown>> {
    return this.resumeRun(turn, turn.spec, input, trace, ctx, "code mode", (t, signal, runId, admittedAt) =>
      this.p.runs.resume(t.spec, runId, (s, claimSignal, restartSafe) =>
        cellEnvironment(s, t.counters, this.deps(s, anySignal(signal, claimSignal), { ...ctx, admittedAt }), restartSafe),
      ),
    );
  }

  /**
   * `tool_search_code { runId }`: continue a cell parked on client calls, like `wait` does a
   * code-mode cell (same claim, queue and resume), with the Tool Search environment.
   */
  private resumeToolSearch(turn: StoredTurn, input: unknown, trace: CellTrace, ctx: CallScope): Promise<SessionReply<unknown>> {
    const spec = toolSearchCellSpec(turn.spec);
    const parsed = parseToolSearchInput("tool_search_code", input);
    if (!parsed.ok) return Promise.resolve({ ok: true, body: failed(parsed.message, "invalid_input", this.telemetry(spec, turn.counters)) });
    return this.resumeRun(turn, spec, input, trace, ctx, "tool_search_code", (t, signal, runId, admittedAt) =>
      this.p.runs.resume(
        toolSearchCellSpec(t.spec),
        runId,
        (s, claimSignal) => toolSearchCellEnvironment(t.spec, t.counters, this.deps(s, anySignal(signal, claimSignal), { ...ctx, admittedAt })),
        toolSearchEnd,
      ),
    );
  }

  /**
   * Resume a parked run: claimed before queueing (a second resume of one runId fails at once),
   * queued like any cell, released however it ends. A teardown observed while queued is `aborted`.
   */
  private resumeRun(
    turn: StoredTurn,
    spec: TurnSpec,
    input: unknown,
    trace: CellTrace,
    ctx: CallScope,
    kind: "code mode" | "tool_search_code",
    resume: (t: StoredTurn, signal: AbortSignal, runId: string, admittedAt: number) => Promise<CodeModeResult>,
  ): Promise<SessionReply<unknown>> {
    const claim = this.p.runs.claim(spec, input);
    if (!claim.ok)
      return Promise.resolve({ ok: true, body: failed(claim.message, claim.code ?? "invalid_input", this.telemetry(spec, turn.counters)) });
    trace.runId = claim.runId;
    const closing = this.telemetry(spec, turn.counters);
    return this.calls
      .serial(async (admittedAt): Promise<SessionReply<unknown>> => {
        const reply = await this.withTurn(spec.tenantId, spec.turnId, trace, ctx, (t, signal) => resume(t, signal, claim.runId, admittedAt));
        if (!reply.ok && reply.reason === "not_found") return { ok: true, body: failed(`the ${kind} run was aborted`, "aborted", closing) };
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
    const held = this.p.turns.hold(tenantId, turnId);
    if (!held) return notFound("unknown turn");
    const { turn } = held;
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
      held.release();
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

  /**
   * Code mode's `exec`/`wait` results of a turn that started Swarm sub-agents: their aggregates in
   * the telemetry (issue 27). A turn that started none costs one read (its spawn count) and keeps
   * exactly the seed's telemetry.
   */
  private async withSubAgents(spec: TurnSpec, reply: SessionReply<unknown>): Promise<SessionReply<unknown>> {
    if (!reply.ok) return reply;
    const result = reply.body as CodeModeResult;
    if (typeof result?.telemetry !== "object") return reply;
    const subAgents = await subAgentTelemetry(this.p.kv, spec.sessionId, spec.turnId).catch(() => undefined);
    if (!subAgents) return reply;
    return { ok: true, body: { ...result, telemetry: { ...result.telemetry, subAgents } } };
  }

  telemetry(spec: TurnSpec, counters: TurnCounters): CodeModeTelemetry {
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
  deps(spec: TurnSpec, signal: AbortSignal, scope: CallScope = {}): TurnDeps {
    const mcp = new McpServers(spec.mcp?.servers ?? [], this.p.env() as unknown as Record<string, unknown>, {
      ...(this.mcpSessions ? { pool: this.mcpSessions } : {}),
    });
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
        // Tool data keeps the taint of the call that wrote it (src/tools/taint-store.ts).
        store: taintedStore(this.p.kv, this.p.taintMarks, {
          untrusted: () => scope.untrusted?.() ?? false,
          taint: (source) => scope.taint?.(source),
        }),
        env: this.p.env(),
        waitUntil: (promise) => this.p.waitUntil(promise),
        ...(spec.agentId !== undefined ? { agentId: spec.agentId } : {}),
        ...(spec.model !== undefined ? { model: spec.model } : {}),
        turnTools: turnToolNames(spec),
        subAgentModelCalls: this.subAgentModelCalls(spec),
        subAgentDepth: this.subAgentDepth(spec),
        ...(spec.party ? { party: spec.party } : {}),
        ...(scope.callId !== undefined ? { callId: scope.callId } : {}),
      },
    };
  }

  // --- Storage lifecycle: session deletion, idle expiry, quotas (session-storage.ts, session-expiry.ts, storage-quota.ts)

  /** Secrets and patterns masked wherever this turn's text is stored or shown. */
  redaction(spec: TurnSpec | undefined): RedactionOptions {
    return { secrets: this.secretsOf(spec), patterns: this.redactPatterns() };
  }

  /** A client tool the model called directly: the turn's policy (hooks, approval), on record under its gateway id `callId`. */
  async admitClient(
    tenantId: string,
    turnId: string,
    call: ModelToolCall,
    { callId, requestId, signal }: { callId: string; requestId: string; signal: AbortSignal },
  ): Promise<{ ok: true; input: unknown; admission?: DirectClientAdmission } | { ok: false; message: string }> {
    const held = this.p.turns.hold(tenantId, turnId);
    const turn = held?.turn;
    const entry = turn ? new Catalog(turn.spec.catalog).clientTool(call.name) : undefined;
    if (!held || !turn || !entry) {
      held?.release();
      return { ok: true as const, input: call.input };
    }
    const recorder = this.recorder(turn.spec, { callId, via: "chat", requestId }, call.name);
    const deps = this.deps(turn.spec, signal, { callId, record: (c, tool, decision, reason) => recorder.policy(c, tool, decision, reason) });
    try {
      return await admitDirectClientCall(
        {
          entry,
          counters: turn.counters,
          saveCounters: () => this.p.turns.saveCounters(turnId, turn.counters),
          recorder,
          policy: deps.policy!({ nested: false }),
          context: { ...deps.context, signal, callId },
          now: () => this.p.clock().now(),
        },
        call.input,
      );
    } finally {
      held.release();
    }
  }

  /** Puts on record (the trajectory) an outer call answered without running it; `code` says why. */
  notRun(tenantId: string, turnId: string, call: { callId: string; tool: string; input: unknown; requestId: string }, code: NotRunCode): void {
    const turn = this.p.turns.get(tenantId, turnId);
    if (turn) this.recorder(turn.spec, { callId: call.callId, via: "chat", requestId: call.requestId }, call.tool).notRun(call.input, code);
  }
}

/** The turn's tools a sub-agent may be given (per catalog: a turn's catalog never changes, and every cell asks). */
function turnToolNames(spec: TurnSpec): readonly string[] {
  let names = turnTools.get(spec.catalog);
  if (!names) {
    // Frozen: every tool call of the turn gets this one array.
    names = Object.freeze([...spec.catalog.entries, ...spec.catalog.direct].filter((e) => e.source !== "client").map((e) => e.toolName));
    turnTools.set(spec.catalog, names);
  }
  return names;
}

const turnTools = new WeakMap<TurnSpec["catalog"], readonly string[]>();

function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  return AbortSignal.any([a, b]);
}
