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
import { TurnStore } from "./turn-store";

export type SessionEnv = {
  CODEMODE_CONFIG?: string;
  /** Debug switches (src/observability/debug-flags.ts); unset in production. */
  CODEMODE_DEBUG?: string;
  /** The image registry; without it every park is self-contained (larger, but survives deploys too). */
  PRISTINE_IMAGES?: DurableObjectNamespace<ImageRegistryRpc>;
};

/**
 * The session Durable Object: a shell. It adapts the session's SQLite storage to the turn
 * service's ports (src/session/ports.ts), owns its alarm, and hands every RPC to the service
 * (src/session/turn-service.ts) in one line. Replies cross the RPC boundary as data; the HTTP
 * layer maps them to responses.
 */
export function createSessionObject(plugins: readonly ToolPlugin[], pool: VmPool, clock: Clock = systemClock, configModule?: CodemodeConfig) {
  return class SessionDurableObject extends DurableObject<SessionEnv> implements SessionRpc {
    /** The gateway's clock (createGateway); a test may also swap it on one live instance. */
    clock: Clock = clock;
    /** Injected in tests (small limits); production reads `gateway.sessions` from the config. */
    limitsOverride: SessionLimits | undefined;
    readonly snapshots: SnapshotStore;
    /** Encodes parked VMs against a base a later build can rebuild (its registry is replaced in tests). */
    readonly codec: SnapshotCodec;
    /** The isolate's VM pool and memory ledger (shared by every object here; read by tests). */
    readonly vms: CellVms;
    private readonly turns: TurnStore;
    private readonly transcript: TranscriptStore;
    private readonly service: TurnService;
    private alarmWrites: Promise<void> = Promise.resolve();

    constructor(ctx: DurableObjectState, env: SessionEnv) {
      super(ctx, env);
      const owner = ctx.id.toString();
      // A new incarnation: VMs and waits of an earlier one that was reset mid-cell are dead,
      // and nobody else would give their room back.
      pool.ledger.releaseOwner(owner);
      this.vms = { pool, owner };
      const sql = new Sql(ctx.storage);
      const transaction = <T>(fn: () => T): T => ctx.storage.transactionSync(fn);
      const ready = () => sessionStorage.ready;
      const quota = new StorageQuota({ sql, transaction, limits: () => this.limits(), ready });
      const expiry = new SessionExpiry({ sql, now: () => this.clock.now(), limits: () => this.limits() });
      const approvals = new ApprovalBroker(sql, () => this.clock.now(), ready, quota);
      // The schema is created by the first turn, not here: an unknown session id stores nothing.
      const sessionStorage = new SessionStorage(ctx.storage, sql, () => {
        quota.init(ctx.storage);
        expiry.init();
      });
      this.turns = new TurnStore(sql, ready, quota);
      this.transcript = new TranscriptStore(sql, ready, quota);
      // Parked runs are counted where they are stored: the quota only checks their writes.
      this.snapshots = new SnapshotStore(sql, (bytes, write, what) => quota.grow(null, bytes, write, what));
      this.codec = new SnapshotCodec(env.PRISTINE_IMAGES ? registryFromBinding(env.PRISTINE_IMAGES) : null);
      const runs = new RunLifecycle({
        store: this.snapshots,
        codec: this.codec,
        sessionTag: () => sessionStorage.runTag(),
        transaction,
        now: () => this.clock.now(),
        scheduleExpiry: (at) => this.armAlarm(at),
      });
      this.service = new TurnService(plugins, {
        turns: this.turns,
        transcript: this.transcript,
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
        alarmsWritten: () => this.alarmWrites,
        env: () => this.env as SessionEnv & Record<string, unknown>,
        config: () => loadGatewayConfig(this.env, configModule),
        waitUntil: (promise) => ctx.waitUntil(promise),
        clock: () => this.clock,
        vms: () => this.vms,
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
      return this.service.alarm();
    }
    /** What the session stores against its quota (operators and tests). */
    storageUsage() {
      return this.service.storageUsage();
    }
    /** Calls running now, per turn (read-only; tests wait on it). */
    runningCalls(): Record<string, number> {
      return this.service.calls.running();
    }

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

    private limits(): SessionLimits {
      if (this.limitsOverride) return this.limitsOverride;
      const config = loadGatewayConfig(this.env, configModule);
      return config.ok ? config.config.operations.sessions : SESSION_LIMIT_DEFAULTS;
    }
  };
}
