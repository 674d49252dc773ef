import { DurableObject } from "cloudflare:workers";
import { logRecord } from "../../src/observability";
import { systemClock, type Clock } from "../../src/runtime";
import { IMAGE_SCHEMA, ImageStore } from "../../src/snapshot-store";
import type { ImageRecord, ImageRegistry } from "../../src/snapshot-store";
import { Sql } from "../sql";

/**
 * The image registry: one object for the whole gateway (`idFromName("v1")`) holding each
 * build's pristine image by digest, so runs parked by one build still restore after a deploy.
 * A thin shell over ImageStore; sessions call it once per isolate and build before parking
 * (`touch`, then `put` when missing) and on the first restore of another build's snapshot
 * (`get`). An alarm prunes images no build has confirmed for two days.
 */
export function createImageRegistry(clock: Clock = systemClock) {
  return class PristineImageRegistry extends DurableObject implements ImageRegistry {
    private readonly images: ImageStore;

    constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
      super(ctx, env);
      const sql = new Sql(ctx.storage);
      for (const stmt of IMAGE_SCHEMA) sql.run(stmt);
      this.images = new ImageStore(sql);
    }

    async touch(digest: string): Promise<boolean> {
      return this.images.touch(digest, clock.now());
    }

    async put(record: ImageRecord): Promise<void> {
      this.images.put(record, clock.now());
      await this.schedulePrune();
    }

    async get(digest: string): Promise<ImageRecord | null> {
      return this.images.get(digest);
    }

    /** The images held, by digest, with when a build last confirmed each (read-only: operators and tests). */
    async digests(): Promise<Array<{ digest: string; lastSeen: number }>> {
      return this.images.digests();
    }

    async alarm(): Promise<void> {
      const gone = this.images.prune(clock.now());
      // Images no build has confirmed for two days.
      if (gone.length > 0) logRecord("image_prune", { pruned: gone.length });
      await this.schedulePrune();
    }

    private async schedulePrune(): Promise<void> {
      const next = this.images.nextPrune();
      if (next === undefined) return;
      // Never in the past: an image touched after the alarm was set is due later.
      const at = Math.max(next, clock.now() + 60_000);
      const current = await this.ctx.storage.getAlarm();
      if (current === null || current > at) await this.ctx.storage.setAlarm(at);
    }
  };
}

/** The registry on the system clock (what createGateway exports). */
export const PristineImageRegistry = createImageRegistry();
