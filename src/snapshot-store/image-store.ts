import { IMAGE_PRUNE_AFTER_MS, type ImageRecord } from "./image-registry";
import type { SqlRunner } from "./snapshot-store";

export const IMAGE_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS images (
     digest TEXT PRIMARY KEY,
     engine TEXT NOT NULL,
     prelude TEXT NOT NULL,
     image BLOB NOT NULL,
     registered_at INTEGER NOT NULL,
     last_seen INTEGER NOT NULL
   )`,
  "CREATE INDEX IF NOT EXISTS images_by_last_seen ON images (last_seen)",
];

/**
 * The registry object's table: one row per build image (~42 KB, well under the 2 MB row
 * limit), stamped whenever a build confirms it still parks against it, pruned once no build
 * has for IMAGE_PRUNE_AFTER_MS (longer than any run parked against it can live).
 */
export class ImageStore {
  constructor(private readonly sql: SqlRunner) {}

  touch(digest: string, now: number): boolean {
    if (!this.sql.one("SELECT 1 AS x FROM images WHERE digest = ?", digest)) return false;
    this.sql.run("UPDATE images SET last_seen = MAX(last_seen, ?) WHERE digest = ?", now, digest);
    return true;
  }

  put(record: ImageRecord, now: number): void {
    this.sql.run(
      `INSERT INTO images (digest, engine, prelude, image, registered_at, last_seen) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (digest) DO UPDATE SET last_seen = MAX(last_seen, excluded.last_seen)`,
      record.digest,
      record.engine,
      record.prelude,
      record.image.slice().buffer as ArrayBuffer,
      now,
      now,
    );
  }

  get(digest: string): ImageRecord | null {
    const row = this.sql.one<{ digest: string; engine: string; prelude: string; image: ArrayBuffer }>(
      "SELECT digest, engine, prelude, image FROM images WHERE digest = ?",
      digest,
    );
    return row ? { digest: row.digest, engine: row.engine, prelude: row.prelude, image: new Uint8Array(row.image) } : null;
  }

  /** Drop images no build has confirmed for IMAGE_PRUNE_AFTER_MS; returns their digests. */
  prune(now: number): string[] {
    const cutoff = now - IMAGE_PRUNE_AFTER_MS;
    const gone = this.sql.all<{ digest: string }>("SELECT digest FROM images WHERE last_seen < ?", cutoff).map((r) => r.digest);
    if (gone.length > 0) this.sql.run("DELETE FROM images WHERE last_seen < ?", cutoff);
    return gone;
  }

  /** When the next image becomes prunable, if any. */
  nextPrune(): number | undefined {
    const t = this.sql.one<{ t: number | null }>("SELECT MIN(last_seen) AS t FROM images")?.t;
    return t === null || t === undefined ? undefined : t + IMAGE_PRUNE_AFTER_MS;
  }

  /** Digests held, oldest confirmation first (tests). */
  digests(): Array<{ digest: string; lastSeen: number }> {
    return this.sql
      .all<{ digest: string; last_seen: number }>("SELECT digest, last_seen FROM images ORDER BY last_seen")
      .map((r) => ({ digest: r.digest, lastSeen: r.last_seen }));
  }
}
