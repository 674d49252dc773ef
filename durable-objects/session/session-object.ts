import { DurableObject } from "cloudflare:workers";
import { Catalog } from "../../src/catalog/catalog";
import type { CatalogEntry } from "../../src/catalog/types";
import { failed } from "../../src/cell/cell-runner";
import type { CodeModeResult, CodeModeTelemetry } from "../../src/code-mode/types";
import { loadGatewayConfig } from "../../src/config";
import { systemClock, type Clock } from "../../src/runtime/clock";
import type { CellVms, VmPool } from "../../src/runtime/vm-pool";
import { newSessionTag } from "../../src/runs/run-id";
import { RunLifecycle } from "../../src/runs/run-lifecycle";
import { SnapshotStore } from "../../src/snapshot-store/snapshot-store";
import type { ToolDefinition, ToolPlugin } from "../../src/tools/types";
import { boundedJson } from "../../src/turns/tool-handlers";
import { callDirectTool, cellEnvironment, execCell, isRestartSafe, type TurnDeps } from "../../src/turns/run-tool";
import type { ModelTool } from "../../src/turns/surface";
import { turnTelemetry } from "../../src/turns/telemetry";
import type { TurnCounters, TurnSpec } from "../../src/turns/turn-spec";
import { planTurn, type OpenTurnRequest } from "./turn-opening";
import { sessionKv } from "./session-kv";
import { applySchema, Sql } from "./sql";
import { TurnStore, type StoredTurn } from "./turn-store";

export type SessionEnv = { CODEMODE_CONFIG?: string };

/** Replies cross the RPC boundary as data; the HTTP layer maps them to responses. */
export type SessionReply<T> = { ok: true; status: number; body: T } | { ok: false; status: number; code: string; message: string };

export type ClientResultBody = { callId: string; value?: unknown; error?: { message: string } };

const notFound = (message: string): SessionReply<never> => ({ ok: false, status: 404, code: "not_found", message });

/**
 * The session Durable Object: a thin shell that owns the session's turns and parked runs,
 * runs its cells one at a time, and hands each concern to its module (turn planning, cell
 * runner, run lifecycle, stores).
 */
export function createSessionObject(plugins: readonly ToolPlugin[], pool: VmPool) {
  const definitions = new Map<string, ToolDefinition>();
  for (const p of plugins) for (const t of p.tools) definitions.set(`${p.id}\u0000${t.name}`, t);
  const resolve = (entry: CatalogEntry): ToolDefinition | undefined =>
    entry.pluginId !== undefined ? definitions.get(`${entry.pluginId}\u0000${entry.toolName}`) : undefined;

  return class SessionDurableObject extends DurableObject<SessionEnv> {
    /** Injected in tests (a frozen or manual clock); production uses the system clock. */
    clock: Clock = systemClock;
    private readonly turns: TurnStore;
    readonly snapshots: SnapshotStore;
    private readonly runs: RunLifecycle;
    private readonly active = new Map<string, Set<AbortController>>();
    private queue: Promise<unknown> = Promise.resolve();
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
      applySchema(sql);
      this.turns = new TurnStore(sql);
      this.snapshots = new SnapshotStore(sql);
      const tag = sql.one<{ value: string }>("SELECT value FROM session_meta WHERE key = 'run_tag'")?.value ?? newSessionTag();
      sql.run("INSERT OR IGNORE INTO session_meta (key, value) VALUES ('run_tag', ?)", tag);
      this.runs = new RunLifecycle({
        store: this.snapshots,
        sessionTag: () => tag,
        transaction: (fn) => ctx.storage.transactionSync(fn),
        now: () => this.clock.now(),
        scheduleExpiry: (at) => void this.scheduleAlarm(at),
      });
    }

    /** Cells of one session run one at a time (input gates open while tools are awaited). */
    private serial<T>(fn: () => Promise<T>): Promise<T> {
      const next = this.queue.then(fn, fn);
      this.queue = next.catch(() => undefined);
      return next;
    }

    async openTurn(
      tenantId: string,
      sessionId: string,
      req: OpenTurnRequest,
    ): Promise<SessionReply<{ turnId: string; codeModeEngaged: boolean; tools: ModelTool[]; telemetry: CodeModeTelemetry }>> {
      const config = loadGatewayConfig(this.env);
      if (!config.ok) return { ok: false, status: 500, code: "invalid_config", message: config.error.message };
      const turnId = crypto.randomUUID();
      const { spec, tools } = planTurn(config.config, plugins, req, {
        turnId,
        tenantId,
        sessionId,
        counterScope: crypto.randomUUID(),
        now: this.clock.now(),
      });
      const counters = { search: 0, describe: 0, call: 0 };
      this.turns.insert(spec, counters);
      return { ok: true, status: 201, body: { turnId, codeModeEngaged: spec.codeModeEngaged, tools, telemetry: this.telemetry(spec, counters) } };
    }

    /**
     * `requestId` names this call so the Worker can cancel it when its client disconnects
     * (`cancelRequest`); an aborted exec or wait fails with `aborted` and its run is dropped.
     */
    async callTool(tenantId: string, turnId: string, toolName: string, input: unknown, requestId?: string): Promise<SessionReply<unknown>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      const { spec } = turn;
      if (spec.codeModeEngaged && toolName === "exec") {
        return this.serial(() => this.withTurn(tenantId, turnId, requestId, (t, signal) => this.exec(t, input, signal)));
      }
      if (spec.codeModeEngaged && toolName === "wait") return this.wait(turn, input, requestId);
      const abort = this.track(turnId, requestId);
      try {
        const routed = await callDirectTool(spec, toolName, input, this.deps(spec, abort.signal));
        if (routed.kind === "not_found") return notFound(routed.message);
        return { ok: true, status: 200, body: routed.result };
      } finally {
        this.untrack(turnId, abort, requestId);
      }
    }

    async clientResult(tenantId: string, turnId: string, body: ClientResultBody): Promise<SessionReply<{ accepted: true }>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      const settlement = body.error
        ? ({ ok: false, message: body.error.message } as const)
        : ({ ok: true, text: boundedJson(body.value ?? null, turn.spec.options.maxOutputBytes) } as const);
      const r = this.runs.deliverClientResult(turnId, body.callId, settlement);
      if (!r.ok) return { ok: false, status: r.status, code: r.status === 409 ? "conflict" : "not_found", message: r.message };
      return { ok: true, status: 202, body: { accepted: true } };
    }

    async deleteTurn(tenantId: string, turnId: string): Promise<SessionReply<{ telemetry: CodeModeTelemetry }>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      for (const c of this.active.get(turnId) ?? []) c.abort();
      this.runs.closeTurn(turnId);
      this.turns.delete(turnId);
      return { ok: true, status: 200, body: { telemetry: this.telemetry(turn.spec, turn.counters) } };
    }

    /** TTL expiry of parked runs, enforced by the alarm rather than only on the next wait. */
    async alarm(): Promise<void> {
      this.runs.expire();
    }

    /** `wait`: claimed before queueing, so a second concurrent wait for one runId fails at once. */
    private wait(turn: StoredTurn, input: unknown, requestId: string | undefined): Promise<SessionReply<unknown>> {
      const { spec } = turn;
      const claim = this.runs.claim(spec, input);
      if (!claim.ok) return Promise.resolve({ ok: true, status: 200, body: failed(claim.message, claim.code ?? "invalid_input", this.telemetry(spec, turn.counters)) });
      const closing = this.telemetry(spec, turn.counters);
      return this.serial(async (): Promise<SessionReply<unknown>> => {
        const reply = await this.withTurn(spec.tenantId, spec.turnId, requestId, (t, signal) =>
          this.runs.resume(t.spec, claim.runId, (s, claimSignal, restartSafe) =>
            cellEnvironment(s, t.counters, this.deps(s, anySignal(signal, claimSignal)), restartSafe),
          ),
        );
        // Torn down while this wait was queued: it observed the teardown.
        if (!reply.ok && reply.status === 404) return { ok: true, status: 200, body: failed("the code mode run was aborted", "aborted", closing) };
        return reply;
      }).finally(() => this.runs.release(claim.runId));
    }

    private async exec(turn: StoredTurn, input: unknown, signal: AbortSignal): Promise<CodeModeResult> {
      const restartSafe = isRestartSafe(input);
      const env = cellEnvironment(turn.spec, turn.counters, this.deps(turn.spec, signal), restartSafe);
      const end = await execCell(env, input);
      return this.runs.finish(turn.spec, end, env, { restartSafe });
    }

    /** Re-read the turn inside the queue, track its abort signal, persist counters after. */
    private async withTurn(
      tenantId: string,
      turnId: string,
      requestId: string | undefined,
      fn: (turn: StoredTurn, signal: AbortSignal) => Promise<CodeModeResult>,
    ): Promise<SessionReply<unknown>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      const abort = this.track(turnId, requestId);
      const before = JSON.stringify(turn.counters);
      try {
        return { ok: true, status: 200, body: await fn(turn, abort.signal) };
      } finally {
        this.untrack(turnId, abort, requestId);
        // Only write when a bridge counter moved: a write holds the reply until it is durable.
        if (JSON.stringify(turn.counters) !== before && this.turns.get(tenantId, turnId)) this.turns.saveCounters(turnId, turn.counters);
      }
    }

    private telemetry(spec: TurnSpec, counters: TurnCounters): CodeModeTelemetry {
      return turnTelemetry(spec, new Catalog(spec.catalog), counters);
    }

    private deps(spec: TurnSpec, signal: AbortSignal): TurnDeps {
      return {
        clock: this.clock,
        signal,
        vms: this.vms,
        resolve,
        context: { tenantId: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, store: sessionKv(this.ctx.storage) },
      };
    }

    private async scheduleAlarm(at: number): Promise<void> {
      const current = await this.ctx.storage.getAlarm();
      if (current === null || current > at) await this.ctx.storage.setAlarm(at);
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

    private track(turnId: string, requestId?: string): AbortController {
      const c = new AbortController();
      if (requestId !== undefined) {
        if (this.cancelled.get(requestId)?.signal.aborted) c.abort();
        this.cancelled.set(requestId, c);
      }
      let set = this.active.get(turnId);
      if (!set) this.active.set(turnId, (set = new Set()));
      set.add(c);
      return c;
    }

    private untrack(turnId: string, c: AbortController, requestId?: string): void {
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
