import type { TurnCounters, TurnSpec } from "../../src/turns";
import { decodedTurn, encodeTurn, type EncodedTurn, type StoredTurn, type TurnStorePort } from "../../src/session";
import type { Sql } from "../sql";
import { logRecord } from "../../src/observability";
import { DELIVERED_CALLS_LIMIT } from "../../src/limits";
import type { StorageQuota } from "./storage-quota";

const utf8 = new TextEncoder();

/** A delivered-call row's own columns (sequence, turn id), counted with its call id. */
const DELIVERED_ROW_BYTES = 64;

const CACHE_LIMIT = 64;
/** Parsed catalogs kept by digest: the session's turns mostly share a few. */
const CATALOG_CACHE_LIMIT = 8;

/**
 * Turns of one session (tenant-scoped rows in the session object's SQLite), with the
 * recently used ones kept parsed in memory: a turn's spec never changes after it opens.
 */
export class TurnStore implements TurnStorePort {
  private readonly cache = new Map<string, StoredTurn>();
  /** Calls running on a turn, by turn id: a held turn stays parsed past CACHE_LIMIT (see `hold`). */
  private readonly holds = new Map<string, number>();
  /**
   * Catalogs read back, by digest: turns that share a stored catalog share its parsed form too (a
   * turn's spec is never changed after it opens), so a session's turns read after a restart parse it once.
   */
  private readonly catalogs = new Map<string, TurnSpec["catalog"]>();

  constructor(
    private readonly sql: Sql,
    /** False while the session has stored nothing (no tables yet, or wiped): every turn is unknown. */
    private readonly ready: () => boolean,
    private readonly quota: StorageQuota,
  ) {}

  insert(spec: TurnSpec, counters: TurnCounters, row: EncodedTurn = encodeTurn(spec, counters)): void {
    // The spec in its own table (schema 12): the turn row stays small for its per-step updates.
    this.sql.run(
      "INSERT INTO turns (turn_id, tenant_id, spec, counters, created_at, stored_bytes, last_active_at) VALUES (?, ?, '', ?, ?, ?, ?)",
      spec.turnId,
      spec.tenantId,
      row.counters,
      spec.createdAt,
      row.charged,
      spec.createdAt,
    );
    if (row.catalogDigest === undefined) {
      this.sql.run("INSERT INTO turn_specs (turn_id, spec) VALUES (?, ?)", spec.turnId, row.spec);
    } else {
      // The catalog once per session (schema 14): a turn opened like one the session holds writes no copy.
      if (this.sql.one("SELECT 1 AS x FROM turn_catalogs WHERE digest = ?", row.catalogDigest) === undefined)
        this.sql.run("INSERT INTO turn_catalogs (digest, json) VALUES (?, ?)", row.catalogDigest, row.catalog);
      this.sql.run("INSERT INTO turn_specs (turn_id, spec, catalog) VALUES (?, ?, ?)", spec.turnId, row.head, row.catalogDigest);
    }
    this.quota.turnAdded(row.charged);
    // Kept parsed as it would be read back: the call that opened it reads it next.
    const decoded = decodedTurn(spec, row);
    this.remember(spec.turnId, decoded);
    if (row.catalogDigest !== undefined) this.keepCatalog(row.catalogDigest, decoded.spec.catalog);
  }

  /** Whether the turn's row exists (a parsed turn in memory exists until `delete` or `forget`). */
  exists(turnId: string): boolean {
    if (!this.ready()) return false;
    return this.cache.has(turnId) || this.sql.one("SELECT 1 AS x FROM turns WHERE turn_id = ?", turnId) !== undefined;
  }

  get(tenantId: string, turnId: string): StoredTurn | undefined {
    if (!this.ready()) return undefined;
    const hit = this.cache.get(turnId);
    if (hit) return hit.spec.tenantId === tenantId ? hit : undefined;
    const turn = this.load(tenantId, turnId);
    if (turn) this.remember(turnId, turn);
    return turn;
  }

  private remember(turnId: string, turn: StoredTurn): void {
    if (this.cache.size >= CACHE_LIMIT) {
      // The least recently stored one no call holds (all held: over the limit until they end).
      for (const id of this.cache.keys())
        if (!this.holds.has(id)) {
          this.cache.delete(id);
          break;
        }
    }
    this.cache.set(turnId, turn);
  }

  hold(tenantId: string, turnId: string): { turn: StoredTurn; release: () => void } | undefined {
    const turn = this.get(tenantId, turnId);
    if (!turn) return undefined;
    this.holds.set(turnId, (this.holds.get(turnId) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (this.holds.get(turnId) ?? 1) - 1;
      if (n > 0) this.holds.set(turnId, n);
      else this.holds.delete(turnId);
    };
    return { turn, release };
  }

  private load(tenantId: string, turnId: string): StoredTurn | undefined {
    const row = this.sql.one<{ spec: string; digest: string | null; counters: string }>(
      "SELECT s.spec AS spec, s.catalog AS digest, t.counters AS counters FROM turns t JOIN turn_specs s ON s.turn_id = t.turn_id WHERE t.turn_id = ? AND t.tenant_id = ?",
      turnId,
      tenantId,
    );
    if (!row) return undefined;
    const counters = JSON.parse(row.counters) as TurnCounters;
    // Stored whole (before schema 14, or without a digest).
    if (row.digest === null) return { spec: JSON.parse(row.spec) as TurnSpec, counters };
    const catalog = this.catalog(row.digest);
    // A catalog row goes only with the last turn that has it; without one the turn cannot be read.
    if (catalog === undefined) {
      logRecord("host_error", { where: "turn.catalog_missing", error: new Error("the turn's stored catalog is missing"), tenant: tenantId, turnId });
      return undefined;
    }
    // The same object, key order included, as parsing the whole spec would give (encodeTurn puts the catalog last).
    const head = JSON.parse(row.spec) as Omit<TurnSpec, "catalog">;
    return { spec: { ...head, catalog }, counters };
  }

  private catalog(digest: string): TurnSpec["catalog"] | undefined {
    let catalog = this.catalogs.get(digest);
    if (catalog === undefined) {
      const row = this.sql.one<{ json: string }>("SELECT json FROM turn_catalogs WHERE digest = ?", digest);
      if (!row) return undefined;
      catalog = JSON.parse(row.json) as TurnSpec["catalog"];
      this.keepCatalog(digest, catalog);
    }
    return catalog;
  }

  private keepCatalog(digest: string, catalog: TurnSpec["catalog"]): void {
    if (this.catalogs.has(digest)) return;
    if (this.catalogs.size >= CATALOG_CACHE_LIMIT) this.catalogs.delete(this.catalogs.keys().next().value!);
    this.catalogs.set(digest, catalog);
  }

  saveCounters(turnId: string, counters: TurnCounters): void {
    this.sql.run("UPDATE turns SET counters = ? WHERE turn_id = ?", JSON.stringify(counters), turnId);
  }

  /** Every stored turn id, newest first (a facade follow-up is most often for the latest turn). */
  ids(): string[] {
    if (!this.ready()) return [];
    return this.sql.all<{ turn_id: string }>("SELECT turn_id FROM turns ORDER BY created_at DESC, rowid DESC").map((r) => r.turn_id);
  }

  /** Drop the parsed cache (the session's storage was wiped). */
  forget(): void {
    this.cache.clear();
    this.catalogs.clear();
  }

  /** What recording `callId` as delivered adds to the session (checked with the result it goes with). */
  static deliveredBytes(callId: string): number {
    return DELIVERED_ROW_BYTES + utf8.encode(callId).length;
  }

  /** A client result for `callId` was accepted for this turn (a guarded write; the oldest records beyond the limit go). */
  recordDelivered(turnId: string, callId: string): void {
    if (this.wasDelivered(turnId, callId)) return;
    this.quota.grow(
      turnId,
      TurnStore.deliveredBytes(callId),
      () => this.sql.run("INSERT INTO delivered_calls (turn_id, call_id) VALUES (?, ?)", turnId, callId),
      "recording this client result",
    );
    const cutoff = this.sql.one<{ seq: number }>(
      "SELECT seq FROM delivered_calls WHERE turn_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?",
      turnId,
      DELIVERED_CALLS_LIMIT,
    );
    if (!cutoff) return;
    const freed =
      this.sql.one<{ b: number | null }>(
        `SELECT SUM(${DELIVERED_ROW_BYTES} + length(CAST(call_id AS BLOB))) AS b FROM delivered_calls WHERE turn_id = ? AND seq <= ?`,
        turnId,
        cutoff.seq,
      )?.b ?? 0;
    this.quota.grow(turnId, -freed, () => this.sql.run("DELETE FROM delivered_calls WHERE turn_id = ? AND seq <= ?", turnId, cutoff.seq));
  }

  wasDelivered(turnId: string, callId: string): boolean {
    return this.sql.one("SELECT 1 AS x FROM delivered_calls WHERE turn_id = ? AND call_id = ?", turnId, callId) !== undefined;
  }

  delete(turnId: string): boolean {
    this.cache.delete(turnId);
    this.sql.run("DELETE FROM delivered_calls WHERE turn_id = ?", turnId);
    const had = this.sql.one("SELECT 1 AS x FROM turns WHERE turn_id = ?", turnId) !== undefined;
    const digest = this.sql.one<{ catalog: string | null }>("SELECT catalog FROM turn_specs WHERE turn_id = ?", turnId)?.catalog;
    this.sql.run("DELETE FROM turns WHERE turn_id = ?", turnId);
    this.sql.run("DELETE FROM turn_specs WHERE turn_id = ?", turnId);
    // The catalog goes with the last turn that has it.
    if (digest)
      this.sql.run("DELETE FROM turn_catalogs WHERE digest = ? AND NOT EXISTS (SELECT 1 FROM turn_specs WHERE catalog = ?)", digest, digest);
    this.quota.forget();
    return had;
  }
}
