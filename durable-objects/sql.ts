/**
 * The one SQLite helper of the Durable Objects (session, image registry): bound parameters only, errors carry the
 * statement. Each object keeps its own schema
 * (the session's: session/schema.ts, applied idempotently before its first write).
 */
export class Sql {
  constructor(private readonly storage: DurableObjectStorage) {}

  all<T = Record<string, SqlStorageValue>>(query: string, ...params: SqlStorageValue[]): T[] {
    try {
      return this.storage.sql.exec(query, ...params).toArray() as T[];
    } catch (error) {
      throw new Error(`SQL failed (${query.split("\n")[0]!.trim().slice(0, 80)}): ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  one<T = Record<string, SqlStorageValue>>(query: string, ...params: SqlStorageValue[]): T | undefined {
    return this.all<T>(query, ...params)[0];
  }

  run(query: string, ...params: SqlStorageValue[]): void {
    this.all(query, ...params);
  }

  /** `fn`'s statements stand or fall together (a throw rolls every one of them back). */
  transaction<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }
}
