/**
 * Section 5: the catalog, from the bench worker (bench/bench-catalog.ts): search quality of
 * SearchIndex against a substring scan and plain BM25 on the retrieval sets (deterministic),
 * search latency over a replicated 10,000-tool catalog (the three searchers alternate query by
 * query), and the bytes of the model-visible surface. The worker's figures are taken as they
 * are; the latency samples are also cut into blocks of consecutive queries, so the latency goal
 * and the ratios get a spread (a burst of load lands in one block, on all three searchers).
 */
import { existsSync, readFileSync } from "node:fs";
import type { Plan } from "./options.ts";
import { blocks, median, summarize, type Summary } from "./stats.ts";
import type { WorkerStats } from "./measure-suspend.ts";

interface Quality {
  queries: number;
  recallAt1: number;
  recallAt8: number;
  mrrAt8: number;
}

export interface Miss {
  query: string;
  expected: string;
  rank: number | null;
  top: string[];
}

export interface QualitySet {
  id: string;
  heldOut: boolean;
  queriesFile: string;
  toolsFile: string;
  tools: number;
  servers: number;
  queryServers: number;
  substring: Quality;
  bm25: Quality;
  index: Quality & { misses: Miss[] };
}

export type Searcher = "index" | "substring" | "bm25";

export interface Latency {
  tools: number;
  queries: number;
  reps: number;
  index: { perQuery: WorkerStats; build: WorkerStats; samples: number[] };
  substring: { perQuery: WorkerStats; build: WorkerStats; samples: number[] };
  bm25: { perQuery: WorkerStats; build: WorkerStats; samples: number[] };
}

export interface Surface {
  tools: number;
  codeModeBytes: number;
  directBytes: number;
  quickIndexLines: number;
  quickIndexOmitted: number;
}

export interface CatalogFigures {
  quality: { limit: number; sets: QualitySet[] };
  latency: Latency;
  blocks: number;
  /** Per-query median of each block, over blocks (the goal's figure). */
  blockMedians: Record<Searcher, Summary>;
  /** Block time (sum of its queries) / the substring scan's time on the same block, over blocks. */
  vsSubstring: Record<Searcher, Summary>;
  surface: Surface[];
  /** bench/experiments/static-vectors.results.md as last written by that experiment, if present. */
  staticVectors: string | null;
}

const STATIC_VECTORS = new URL("../experiments/static-vectors.results.md", import.meta.url);

export async function measureCatalog(
  get: (route: string) => Promise<any>,
  plan: Plan["catalog"],
  log: (msg: string) => void,
): Promise<CatalogFigures> {
  const quality = (await get("/search-quality")) as CatalogFigures["quality"];
  log(`[5] catalog: search quality on ${quality.sets.map((x) => `${x.id} (${x.index.queries} queries, ${x.tools} tools)`).join(", ")} done`);
  const latency = (await get(`/search-latency?size=${plan.latencyTools}&reps=${plan.reps}&builds=${plan.builds}`)) as Latency;
  log(`[5] catalog: search latency over ${latency.tools} tools (${latency.queries} queries × ${latency.reps}) done`);
  const surface = (await get(`/surface?sizes=${plan.surfaceSizes.join(",")}`)) as Surface[];
  log(`[5] catalog: model surface for ${surface.map((x) => x.tools).join(" / ")} tools done`);

  const searchers: Searcher[] = ["index", "substring", "bm25"];
  const cut = (s: Searcher) => blocks(latency[s].samples, plan.blocks);
  const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const base = cut("substring").map(total);
  return {
    quality,
    latency,
    blocks: base.length,
    blockMedians: Object.fromEntries(searchers.map((s) => [s, summarize(cut(s).map((b) => median(b)))])) as Record<Searcher, Summary>,
    vsSubstring: Object.fromEntries(searchers.map((s) => [s, summarize(cut(s).map((b, i) => total(b) / base[i]!))])) as Record<Searcher, Summary>,
    surface,
    staticVectors: existsSync(STATIC_VECTORS) ? String(readFileSync(STATIC_VECTORS, "utf8")).trimEnd() : null,
  };
}
