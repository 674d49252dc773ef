/**
 * What tests read of a session object's storage, and how they set its environment: a subclass the
 * test entries (test/e2e/entry.ts, test/kit/entry.ts) export in place of the gateway's class. The
 * production object carries nothing for tests; this one adds RPC methods over its own storage
 * (`this.ctx.storage`) and the storage adapters built over it, so tests reach the object only
 * through HTTP and RPC (never `runInDurableObject`).
 */
import type { DurableObject } from "cloudflare:workers";
import { Sql } from "../../durable-objects/sql";
import { TurnStore } from "../../durable-objects/session/turn-store";
import { SnapshotStore } from "../../src/snapshot-store";

/** Environment variables laid over a session object's bindings, by object id (set before or while it runs; cleared after each test). */
const envOverlays = new Map<string, Record<string, unknown>>();

export function overlaySessionEnv(objectId: string, vars: Record<string, unknown> | undefined): void {
  if (vars === undefined) envOverlays.delete(objectId);
  else envOverlays.set(objectId, vars);
}

export function resetSessionEnvOverlays(): void {
  envOverlays.clear();
}

/** The bindings with this object's overlay on top, read on every access (the object reads its env lazily). */
function overlaidEnv(env: object, objectId: string): object {
  const overlay = () => envOverlays.get(objectId) ?? {};
  return new Proxy(env, {
    get: (target, key) => (typeof key === "string" && key in overlay() ? overlay()[key] : Reflect.get(target, key)),
    has: (target, key) => (typeof key === "string" && key in overlay()) || Reflect.has(target, key),
    ownKeys: (target) => [...new Set([...Reflect.ownKeys(target), ...Object.keys(overlay())])],
    getOwnPropertyDescriptor: (target, key) =>
      typeof key === "string" && key in overlay()
        ? { value: overlay()[key], enumerable: true, configurable: true, writable: false }
        : Reflect.getOwnPropertyDescriptor(target, key),
  });
}

export type StatementCount = { statements: number; transactions: number; byVerb: Record<string, number>; log: string[] };

type ObjectClass = new (...args: any[]) => DurableObject<any>;

export function withSessionProbe<T extends ObjectClass>(Base: T) {
  return class SessionProbe extends Base {
    constructor(...args: any[]) {
      const [ctx, env] = args as [DurableObjectState, object];
      super(ctx, overlaidEnv(env, ctx.id.toString()));
    }

    /** Rows of a query over the session's SQLite (read-only by convention; `storageWrite` says when it is not). */
    storageRows(query: string, ...binds: SqlStorageValue[]): Record<string, SqlStorageValue>[] {
      return this.ctx.storage.sql.exec(query, ...binds).toArray();
    }

    /** A statement that changes stored rows behind the object's back (a corrupted snapshot chunk). */
    storageWrite(query: string, ...binds: SqlStorageValue[]): void {
      this.ctx.storage.sql.exec(query, ...binds);
    }

    /**
     * The next SQL statement of this object that starts with `prefix` (once `after` such statements
     * ran) fails with `message`, as the platform's storage would (e.g. SQLITE_TOOBIG); the ones after it run.
     */
    failNextStatement(prefix: string, message: string, after = 0): void {
      const sql = this.ctx.storage.sql;
      if (sql !== this.ctx.storage.sql) throw new Error("ctx.storage.sql is not one object: a statement fault cannot be injected");
      const exec = sql.exec;
      let passed = 0;
      sql.exec = ((query: string, ...binds: SqlStorageValue[]) => {
        if (!query.trimStart().startsWith(prefix) || passed++ < after) return exec.call(sql, query, ...binds);
        delete (sql as { exec?: unknown }).exec; // the platform's own method again
        throw new Error(message);
      }) as typeof sql.exec;
    }

    /**
     * Count this object's SQL statements and storage transactions from now on (`statementCount` reads
     * them): how many round trips into SQLite a step costs, a figure that does not depend on timing.
     */
    countStatements(): void {
      const storage = this.ctx.storage;
      const sql = storage.sql;
      const counter: StatementCount = { statements: 0, transactions: 0, byVerb: {}, log: [] };
      (this as unknown as { statementCounter: typeof counter }).statementCounter = counter;
      if ((sql as { counting?: boolean }).counting) return;
      const exec = sql.exec;
      const transactionSync = storage.transactionSync;
      const self = this as unknown as { statementCounter: StatementCount };
      Object.assign(sql, { counting: true });
      sql.exec = ((query: string, ...binds: SqlStorageValue[]) => {
        self.statementCounter.statements++;
        self.statementCounter.log.push(query.replace(/\s+/g, " ").trim().slice(0, 100));
        const verb = query.trimStart().split(/\s/, 1)[0]!.toUpperCase();
        self.statementCounter.byVerb[verb] = (self.statementCounter.byVerb[verb] ?? 0) + 1;
        return exec.call(sql, query, ...binds);
      }) as typeof sql.exec;
      storage.transactionSync = (<T>(fn: () => T): T => {
        self.statementCounter.transactions++;
        return transactionSync.call(storage, fn) as T;
      }) as typeof storage.transactionSync;
    }

    /** Statements and transactions counted since `countStatements` (per leading verb, and each statement's first 100 characters). */
    statementCount(): StatementCount {
      const counter = (this as unknown as { statementCounter?: StatementCount }).statementCounter;
      return counter ? { ...counter, byVerb: { ...counter.byVerb }, log: [...counter.log] } : { statements: 0, transactions: 0, byVerb: {}, log: [] };
    }

    /** The object's MCP session pool: handshakes made and sessions held (white-box: the pool has no RPC). */
    mcpPool(): { connects: number; size: number } {
      const pool = (this as unknown as { service: { mcpSessions: { connects: number; size: number } } }).service.mcpSessions;
      return { connects: pool.connects, size: pool.size };
    }

    storageKeys(prefix?: string): string[] {
      return [...this.ctx.storage.kv.list(prefix === undefined ? {} : { prefix })].map(([key]) => key);
    }

    storageGet(key: string): Promise<unknown> {
      return this.ctx.storage.get(key);
    }

    /** A key written as another request would (e.g. the note a waiting cell polls for). */
    storagePut(key: string, value: unknown): Promise<void> {
      return this.ctx.storage.put(key, value);
    }

    /** Every key/value pair of the key-value API. */
    async storageEntries(): Promise<Array<[string, unknown]>> {
      return [...(await this.ctx.storage.list())];
    }

    /**
     * Reset this object, as the platform does past a CPU or memory limit: its incarnation and
     * everything it runs go (unlike `evictDurableObject`, which waits for in-flight work to
     * drain); storage and its alarm stay. Done after this call answers (a reset fails the call
     * that makes it); the next call reaches a new incarnation.
     */
    resetObject(): void {
      setTimeout(() => {
        try {
          this.ctx.abort("reset by a test (storage probe)");
        } catch {
          // abort() throws its reason in the caller too.
        }
      }, 0);
    }

    storageAlarm(): Promise<number | null> {
      return this.ctx.storage.getAlarm();
    }

    databaseSize(): number {
      return this.ctx.storage.sql.databaseSize;
    }

    /** A parked run's stored snapshot bytes, read through the snapshot store adapter. */
    parkedSnapshot(runId: string): Uint8Array | undefined {
      return new SnapshotStore(new Sql(this.ctx.storage)).bytes(runId);
    }

    /** Replace a parked run's stored snapshot (what another build, engine or ABI would have written). */
    replaceParkedSnapshot(runId: string, bytes: Uint8Array): void {
      const store = new SnapshotStore(new Sql(this.ctx.storage));
      const state = store.state(runId);
      if (!state) throw new Error(`no parked run ${runId}`);
      store.put(state, bytes);
    }

    /** Parked runs of one turn. */
    parkedRunsOfTurn(turnId: string): number {
      return new SnapshotStore(new Sql(this.ctx.storage)).runsOfTurn(turnId).length;
    }

    /**
     * The turn store adapter over this session's SQLite: records `record` as delivered client
     * results (turn id, call id), then answers which of `ask` it still remembers.
     */
    deliveredCalls(record: Array<[string, string]>, ask: Array<[string, string]>): boolean[] {
      const unmetered = { grow: (_turnId: string | null, _bytes: number, write: () => void) => write() };
      const turns = new TurnStore(new Sql(this.ctx.storage), () => true, unmetered as unknown as ConstructorParameters<typeof TurnStore>[2]);
      for (const [turnId, callId] of record) turns.recordDelivered(turnId, callId);
      return ask.map(([turnId, callId]) => turns.wasDelivered(turnId, callId));
    }
  };
}
