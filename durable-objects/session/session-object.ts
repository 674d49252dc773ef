import { DurableObject } from "cloudflare:workers";
import { Catalog } from "../../src/catalog/catalog";
import type { CatalogEntry } from "../../src/catalog/types";
import type { CellEnd } from "../../src/cell/cell-runner";
import { closeWith, failed } from "../../src/cell/cell-runner";
import type { CodeModeResult } from "../../src/code-mode/types";
import { loadGatewayConfig } from "../../src/config";
import { systemClock, type Clock } from "../../src/runtime/clock";
import type { ToolDefinition, ToolPlugin } from "../../src/tools/types";
import { callDirectTool, execCell, type TurnDeps } from "../../src/turns/run-tool";
import { turnTelemetry } from "../../src/turns/telemetry";
import type { ModelTool } from "../../src/turns/surface";
import type { CodeModeTelemetry } from "../../src/code-mode/types";
import { planTurn, type OpenTurnRequest } from "./turn-opening";
import { sessionKv } from "./session-kv";
import { applySchema, Sql } from "./sql";
import { TurnStore, type StoredTurn } from "./turn-store";

export type SessionEnv = { CODEMODE_CONFIG?: string };

/** Replies cross the RPC boundary as data; the HTTP layer maps them to responses. */
export type SessionReply<T> = { ok: true; status: number; body: T } | { ok: false; status: number; code: string; message: string };

const notFound = (message: string): SessionReply<never> => ({ ok: false, status: 404, code: "not_found", message });

/**
 * The session Durable Object: a thin shell that owns the session's turns, runs its cells
 * one at a time, and hands each concern to its module (turn planning, cell runner, stores).
 */
export function createSessionObject(plugins: readonly ToolPlugin[]) {
  const definitions = new Map<string, ToolDefinition>();
  for (const p of plugins) for (const t of p.tools) definitions.set(`${p.id}\u0000${t.name}`, t);
  const resolve = (entry: CatalogEntry): ToolDefinition | undefined =>
    entry.pluginId !== undefined ? definitions.get(`${entry.pluginId}\u0000${entry.toolName}`) : undefined;

  return class SessionDurableObject extends DurableObject<SessionEnv> {
    /** Injected in tests (a frozen or manual clock); production uses the system clock. */
    clock: Clock = systemClock;
    private readonly sql: Sql;
    private readonly turns: TurnStore;
    private readonly active = new Map<string, Set<AbortController>>();
    private queue: Promise<unknown> = Promise.resolve();

    constructor(ctx: DurableObjectState, env: SessionEnv) {
      super(ctx, env);
      this.sql = new Sql(ctx.storage);
      applySchema(this.sql);
      this.turns = new TurnStore(this.sql);
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
      const telemetry = turnTelemetry(spec, new Catalog(spec.catalog), counters);
      return { ok: true, status: 201, body: { turnId, codeModeEngaged: spec.codeModeEngaged, tools, telemetry } };
    }

    async callTool(tenantId: string, turnId: string, toolName: string, input: unknown): Promise<SessionReply<unknown>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      const { spec } = turn;
      if (spec.codeModeEngaged && (toolName === "exec" || toolName === "wait")) {
        return this.serial(async () => {
          const fresh = this.turns.get(tenantId, turnId);
          if (!fresh) return notFound("unknown turn");
          const result = toolName === "exec" ? await this.exec(fresh, input) : this.unavailableRun(fresh);
          return { ok: true, status: 200, body: result };
        });
      }
      const abort = this.track(turnId);
      try {
        const routed = await callDirectTool(spec, toolName, input, this.deps(spec, abort.signal));
        if (routed.kind === "not_found") return notFound(routed.message);
        return { ok: true, status: 200, body: routed.result };
      } finally {
        this.untrack(turnId, abort);
      }
    }

    async deleteTurn(tenantId: string, turnId: string): Promise<SessionReply<{ telemetry: CodeModeTelemetry }>> {
      const turn = this.turns.get(tenantId, turnId);
      if (!turn) return notFound("unknown turn");
      for (const c of this.active.get(turnId) ?? []) c.abort();
      this.turns.delete(turnId);
      return { ok: true, status: 200, body: { telemetry: turnTelemetry(turn.spec, new Catalog(turn.spec.catalog), turn.counters) } };
    }

    private async exec(turn: StoredTurn, input: unknown): Promise<CodeModeResult> {
      const abort = this.track(turn.spec.turnId);
      try {
        const end: CellEnd = await execCell(turn.spec, turn.counters, input, this.deps(turn.spec, abort.signal));
        return this.settle(turn, end);
      } finally {
        this.untrack(turn.spec.turnId, abort);
        if (this.turns.get(turn.spec.tenantId, turn.spec.turnId)) this.turns.saveCounters(turn.spec.turnId, turn.counters);
      }
    }

    /** Until parking lands, a cell that outlives its deadline fails with `timeout`. */
    private settle(turn: StoredTurn, end: CellEnd): CodeModeResult {
      if (end.kind === "result") return end.result;
      const telemetry = turnTelemetry(turn.spec, new Catalog(turn.spec.catalog), turn.counters);
      return closeWith(end.cell, failed(`exec deadline (timeoutMs ${turn.spec.options.timeoutMs}) passed with host work still pending`, "timeout", telemetry));
    }

    private unavailableRun(turn: StoredTurn): CodeModeResult {
      return failed("code mode run is unavailable or expired.", "invalid_input", turnTelemetry(turn.spec, new Catalog(turn.spec.catalog), turn.counters));
    }

    private deps(spec: StoredTurn["spec"], signal: AbortSignal): TurnDeps {
      return {
        clock: this.clock,
        signal,
        resolve,
        context: { tenantId: spec.tenantId, sessionId: spec.sessionId, turnId: spec.turnId, store: sessionKv(this.ctx.storage) },
      };
    }

    private track(turnId: string): AbortController {
      const c = new AbortController();
      let set = this.active.get(turnId);
      if (!set) this.active.set(turnId, (set = new Set()));
      set.add(c);
      return c;
    }

    private untrack(turnId: string, c: AbortController): void {
      const set = this.active.get(turnId);
      set?.delete(c);
      if (set && set.size === 0) this.active.delete(turnId);
    }
  };
}
