import { DurableObject } from "cloudflare:workers";
import { loadGatewayConfig, SESSION_LIMIT_DEFAULTS, type CodemodeConfig, type SessionLimits } from "../../src/config";
import type { ChatRequest } from "../../src/agent";
import { systemClock, type CellVms, type Clock, type VmPool } from "../../src/runtime";
import { RunLifecycle } from "../../src/runs";
import { registryFromBinding, SnapshotCodec, SnapshotStore, type ImageRegistryRpc } from "../../src/snapshot-store";
import type { ToolPlugin } from "../../src/tools";
import type { OpenTurnRequest } from "../../src/turns";
import { TurnService, type ApprovalDecision, type ClientResultBody, type SessionRpc } from "../../src/session";
import { logRecord } from "../../src/observability";
import { Sql } from "../sql";
import { ApprovalBroker } from "./approval-broker";
import { SessionExpiry } from "./session-expiry";
import { sessionKv } from "./session-kv";
import { SessionStorage } from "./session-storage";
import { StorageQuota, TAINT_PREFIX } from "./storage-quota";
import { ToolCallClients } from "./tool-call-clients";
import { TranscriptStore } from "./transcript-store";
import { AlarmSchedule } from "./alarm-schedule";
import { TurnStore } from "./turn-store";

export type SessionEnv = {
  CODEMODE_CONFIG?: string;
  /** Debug switches (src/observability/debug-flags.ts); unset in production. */
  CODEMODE_DEBUG?: string;
  /** The image registry; without it every park is self-contained (larger, but survives deploys too). */
  PRISTINE_IMAGES?: DurableObjectNamespace<ImageRegistryRpc>;
};

/** What a session object is built from besides its plugins and the isolate's VM pool (createGateway passes them). */
export type SessionObjectOptions = {
  /** Where the object reads time (deadlines, TTLs, idle expiry); the system clock by default. */
  clock?: Clock;
  /** The config module (`defineConfig`), under `CODEMODE_CONFIG`. */
  config?: CodemodeConfig;
  /**
   * Session limits that win over the config's `gateway.sessions`, unclamped, read on every use (an
   * embedding with fixed limits; test entries pass small ones). `undefined` reads the config.
   */
  limits?: () => SessionLimits | undefined;
};

/**
 * The session Durable Object: a shell. It adapts the session's SQLite storage to the turn
 * service's ports (src/session/ports.ts), owns its alarm, and hands every RPC to the service
 * (src/session/turn-service.ts) in one line. Replies cross the RPC boundary as data; the HTTP
 * layer maps them to responses.
 */
export function createSessionObject(plugins: readonly ToolPlugin[], pool: VmPool, options: SessionObjectOptions = {}) {
  const clock = options.clock ?? systemClock;
  const configModule = options.config;
  return class SessionDurableObject extends DurableObject<SessionEnv> implements SessionRpc {
    private readonly snapshots: SnapshotStore;
    private readonly service: TurnService;
    private readonly alarms: AlarmSchedule;

    constructor(ctx: DurableObjectState, env: SessionEnv) {
      super(ctx, env);
      this.alarms = new AlarmSchedule(ctx.storage);
      const owner = ctx.id.toString();
      // A new incarnation: VMs and waits of an earlier one that was reset mid-cell are dead,
      // and nobody else would give their room back.
      pool.ledger.releaseOwner(owner);
      // The isolate's VM pool and memory ledger (shared by every object here), and this object as the owner of its VMs.
      const vms: CellVms = { pool, owner };
      const sql = new Sql(ctx.storage);
      // Stores keep running totals of what they wrote (storage-quota.ts, transcript-store.ts): a
      // rolled-back transaction takes those writes back, so they sum again from SQL.
      const forgetTotals = () => {
        quota.forget();
        transcript.forget();
        expiry.forget();
      };
      const transaction = <T>(fn: () => T): T => {
        try {
          return ctx.storage.transactionSync(fn);
        } catch (error) {
          forgetTotals();
          throw error;
        }
      };
      const ready = () => sessionStorage.ready;
      const quota = new StorageQuota({ sql, transaction, forgetTotals, limits: () => this.limits(), ready });
      const expiry = new SessionExpiry({ sql, now: () => clock.now(), limits: () => this.limits() });
      const approvals = new ApprovalBroker(sql, () => clock.now(), ready, quota);
      // The schema is created by the first turn, not here: an unknown session id stores nothing.
      const sessionStorage = new SessionStorage(ctx.storage, sql, this.alarms, () => {
        quota.init(ctx.storage);
        expiry.init();
      });
      // Parked runs are counted where they are stored: the quota only checks their writes.
      // Their other writes (results, removal) change what the quota sums: it sums again after any.
      const snapshotSql = {
        one: sql.one.bind(sql),
        all: sql.all.bind(sql),
        run: (q: string, ...p: SqlStorageValue[]) => (quota.forget(), sql.run(q, ...p)),
      };
      this.snapshots = new SnapshotStore(snapshotSql, (bytes, write, what) => quota.grow(null, bytes, write, what));
      // Encodes parked VMs against a base a later build can rebuild.
      const codec = new SnapshotCodec(env.PRISTINE_IMAGES ? registryFromBinding(env.PRISTINE_IMAGES) : null);
      const runs = new RunLifecycle({
        store: this.snapshots,
        codec,
        sessionTag: () => sessionStorage.runTag(),
        transaction,
        now: () => clock.now(),
        scheduleExpiry: (at) => this.armAlarm(at),
      });
      const turns = new TurnStore(sql, ready, quota);
      const transcript = new TranscriptStore(sql, ready, quota, (turnId) => turns.exists(turnId));
      this.service = new TurnService(plugins, {
        turns,
        transcript,
        toolCallClients: new ToolCallClients(sql, ready, quota),
        approvals,
        snapshots: this.snapshots,
        runs,
        quota,
        expiry,
        sessionStorage,
        kv: sessionKv(ctx.storage, quota),
        taintMarks: sessionKv(ctx.storage, quota, TAINT_PREFIX),
        transaction,
        armAlarm: (at) => this.armAlarm(at),
        alarmsWritten: () => this.alarms.settled(),
        env: () => this.env as SessionEnv & Record<string, unknown>,
        config: () => loadGatewayConfig(this.env, configModule),
        waitUntil: (promise) => ctx.waitUntil(promise),
        clock: () => clock,
        vms: () => vms,
        limits: () => this.limits(),
        providerFetch: () => undefined,
      });
      if (sessionStorage.ready) this.service.recover(approvals.init());
    }

    openTurn(tenantId: string, sessionId: string, req: OpenTurnRequest) {
      return this.service.openTurn(tenantId, sessionId, req);
    }
    describeTurn(tenantId: string, turnId: string) {
      return this.service.describeTurn(tenantId, turnId);
    }
    callTool(tenantId: string, turnId: string, toolName: string, input: unknown, requestId?: string) {
      return this.service.callTool(tenantId, turnId, toolName, input, requestId);
    }
    async cancelRequest(requestId: string): Promise<void> {
      this.service.cancelRequest(requestId);
    }
    lostCall(tenantId: string, turnId: string, toolName: string, requestId?: string) {
      return this.service.lostCall(tenantId, turnId, toolName, requestId);
    }
    clientResult(tenantId: string, turnId: string, body: ClientResultBody) {
      return this.service.clientResult(tenantId, turnId, body);
    }
    async callTurn(tenantId: string, callIds: string[]) {
      return this.service.callTurn(tenantId, callIds);
    }
    chat(tenantId: string, sessionId: string, req: ChatRequest, requestId: string) {
      return this.service.chat(tenantId, sessionId, req, requestId);
    }
    startChild(tenantId: string, sessionId: string, req: ChatRequest, requestId: string, parentSessionId: string) {
      return this.service.startChild(tenantId, sessionId, req, requestId, parentSessionId);
    }
    async childSettled(childSessionId: string): Promise<void> {
      this.service.childSettled(childSessionId);
    }
    childResult(tenantId: string, requestId: string, waitMs: number) {
      return this.service.childResult(tenantId, requestId, waitMs);
    }
    trajectory(tenantId: string, turnId: string) {
      return this.service.trajectory(tenantId, turnId);
    }
    listApprovals(tenantId: string) {
      return this.service.listApprovals(tenantId);
    }
    decideApproval(tenantId: string, approvalId: string, decision: ApprovalDecision) {
      return this.service.decideApproval(tenantId, approvalId, decision);
    }
    deleteTurn(tenantId: string, turnId: string) {
      return this.service.deleteTurn(tenantId, turnId);
    }
    deleteSession() {
      return this.service.deleteSession();
    }
    /** TTL expiry of parked runs and idle expiry of turns and the session. */
    alarm(): Promise<void> {
      this.alarms.fired();
      return this.service.alarm();
    }
    /** What the session stores against its quota (operators and tests). */
    storageUsage() {
      return this.service.storageUsage();
    }
    /** What parked runs hold in storage: runs, their snapshot chunks, settled results, bytes (operators and tests). */
    parkedRuns(): { runs: number; chunks: number; results: number; storedBytes: number } {
      return this.snapshots.footprint();
    }
    /** Calls running now, per turn (read-only; tests wait on it). */
    runningCalls(): Record<string, number> {
      return this.service.calls.running();
    }

    /** Ask for an alarm without waiting for it; a failed write is logged (the next request re-arms). */
    private armAlarm(at: number): void {
      this.alarms.arm(at).catch((error: unknown) => logRecord("host_error", { where: "alarm.schedule", error }));
    }

    private limits(): SessionLimits {
      const fixed = options.limits?.();
      if (fixed) return fixed;
      const config = loadGatewayConfig(this.env, configModule);
      return config.ok ? config.config.operations.sessions : SESSION_LIMIT_DEFAULTS;
    }
  };
}
