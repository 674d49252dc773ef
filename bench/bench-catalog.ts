/**
 * Bench-only: catalog search quality and latency, and the model-visible surface size, run
 * inside workerd against the project's own code (src/catalog/search-index.ts,
 * src/turns/surface.ts). Five retrieval sets (bench/retrieval-sets.ts), each query with one
 * expected tool:
 *   - three development sets over search-tools.json (406 tools): search-queries.json,
 *     search-queries-heldout.json and search-queries-heldout2.json. Their misses shaped the old
 *     hand-written vocabulary, and all three were used to choose the present method (BM25F field
 *     weights, k1, the stop-word weight): optimistic for SearchIndex.
 *   - two fresh sets with their own tools: search-queries-fresh.json (held out when the method
 *     was frozen, read since: development data now) and search-queries-fresh2.json, the held-out
 *     set, written afterwards by someone who saw neither the method nor any result.
 *
 * Three searchers, all over the same CatalogEntry objects:
 *   - substring scan (score = number of distinct query words contained in `name + " " +
 *     description`, lowercased; ties keep catalog order);
 *   - plain BM25 with stemming: the same tokenizer and Porter2 stemmer as SearchIndex
 *     (src/catalog/search-tokens.ts), one field holding everything SearchIndex reads (name,
 *     label, description, parameter names and descriptions), k1 = 1.2, b = 0.75, no field
 *     weights, no stop-word handling, no expansion;
 *   - SearchIndex (what `catalog.search` runs).
 */
import { buildCatalog } from "../src/catalog";
import { SearchIndex } from "../src/catalog";
import { tokenize } from "../src/catalog";
import type { CatalogEntry } from "../src/catalog";
import { CODE_MODE_DEFAULTS } from "../src/config";
import type { ToolPlugin } from "../src/tools";
import { renderQuickIndex } from "../src/turns";
import { modelSurface } from "../src/turns";
import { checkSet, entryOf, LIMIT, quality, QUERIES, SETS, TOOLS } from "./retrieval-sets";
import type { FixtureTool, Searcher } from "./retrieval-sets";

const encoder = new TextEncoder();

/** Workspace/account-style suffixes for the replicated catalog (copy 0 is the original). */
const VARIANTS = [
  "prod",
  "staging",
  "eu",
  "us",
  "acme",
  "globex",
  "initech",
  "umbrella",
  "hooli",
  "stark",
  "wayne",
  "wonka",
  "tyrell",
  "cyberdyne",
  "aperture",
  "blackmesa",
  "oscorp",
  "soylent",
  "vandelay",
  "dunder",
  "piedpiper",
  "gringotts",
  "monsters",
  "duff",
  "contoso",
  "fabrikam",
  "northwind",
  "adventureworks",
  "tailspin",
  "wingtip",
];

/** The fixtures replicated to `n` tools: originals first, then copies with a suffix per copy. */
function replicated(n: number): FixtureTool[] {
  const out: FixtureTool[] = [];
  for (let copy = 0; out.length < n; copy++) {
    if (copy > VARIANTS.length) throw new Error(`cannot replicate to ${n} tools`);
    const v = copy === 0 ? null : VARIANTS[copy - 1]!;
    for (const t of TOOLS) {
      if (out.length >= n) break;
      out.push(v ? { ...t, name: `${t.name}_${v}`, description: `${t.description} (${v} account)` } : t);
    }
  }
  return out;
}

type Ranked = { i: number; s: number };
const byScore = (a: Ranked, b: Ranked) => b.s - a.s || a.i - b.i;

/** Baseline 1: substring scan over name + description. */
class SubstringScan {
  private readonly hay: string[];
  constructor(private readonly entries: readonly CatalogEntry[]) {
    this.hay = entries.map((e) => `${e.toolName} ${e.description}`.toLowerCase());
  }
  search(query: string, limit: number): CatalogEntry[] {
    const words = [
      ...new Set(
        query
          .toLowerCase()
          .split(/[^a-z0-9]+/)
          .filter((w) => w.length > 0),
      ),
    ];
    const scored: Ranked[] = [];
    for (let i = 0; i < this.hay.length; i++) {
      const h = this.hay[i]!;
      let s = 0;
      for (const w of words) if (h.includes(w)) s++;
      if (s > 0) scored.push({ i, s });
    }
    scored.sort(byScore);
    return scored.slice(0, limit).map((x) => this.entries[x.i]!);
  }
}

/** Everything SearchIndex reads of a tool, as one text. */
function allText(e: CatalogEntry): string {
  const props = (e.parameters as { properties?: unknown }).properties;
  const parts = [e.toolName, e.label ?? "", e.description];
  if (props && typeof props === "object") {
    parts.push(Object.keys(props).join(" "));
    for (const p of Object.values(props)) {
      const d: unknown = p && typeof p === "object" ? (p as { description?: unknown }).description : undefined;
      if (typeof d === "string") parts.push(d.slice(0, 200));
    }
  }
  return parts.join(" ");
}

/** Baseline 2: textbook BM25 over one field, same tokens and stemmer as SearchIndex, no expansion. */
class PlainBm25 {
  private static readonly K1 = 1.2;
  private static readonly B = 0.75;
  private readonly postings = new Map<string, Array<{ doc: number; tf: number }>>();
  private readonly lengths: number[] = [];
  private readonly avgLen: number;
  constructor(private readonly entries: readonly CatalogEntry[]) {
    let total = 0;
    entries.forEach((e, doc) => {
      const tokens = tokenize(allText(e));
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, f] of tf) {
        let list = this.postings.get(t);
        if (!list) this.postings.set(t, (list = []));
        list.push({ doc, tf: f });
      }
      this.lengths.push(tokens.length);
      total += tokens.length;
    });
    this.avgLen = total / Math.max(1, entries.length);
  }
  search(query: string, limit: number): CatalogEntry[] {
    const { K1, B } = PlainBm25;
    const n = this.entries.length;
    const scores = new Map<number, number>();
    for (const t of new Set(tokenize(query))) {
      const list = this.postings.get(t);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const { doc, tf } of list) {
        const norm = tf + K1 * (1 - B + (B * this.lengths[doc]!) / this.avgLen);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (K1 + 1)) / norm);
      }
    }
    const ranked: Ranked[] = [];
    for (const [i, s] of scores) ranked.push({ i, s });
    ranked.sort(byScore);
    return ranked.slice(0, limit).map((x) => this.entries[x.i]!);
  }
}

/** recall@1, recall@8 and MRR@8 of the three searchers on every set (misses kept for SearchIndex only). */
export function searchQuality() {
  return {
    limit: LIMIT,
    sets: SETS.map((set) => {
      checkSet(set);
      const entries = set.tools.map(entryOf);
      const byName = new Map(set.tools.map((t) => [t.name, t.server]));
      const drop = <T extends { misses: unknown }>(r: T) => ({ ...r, misses: undefined });
      return {
        id: set.id,
        heldOut: set.heldOut,
        queriesFile: set.queriesFile,
        toolsFile: set.toolsFile,
        tools: entries.length,
        servers: new Set(set.tools.map((t) => t.server)).size,
        queryServers: new Set(set.queries.map((q) => byName.get(q.expected))).size,
        substring: drop(quality(new SubstringScan(entries), set.queries)),
        bm25: drop(quality(new PlainBm25(entries), set.queries)),
        index: quality(new SearchIndex(entries), set.queries),
      };
    }),
  };
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { n: s.length, median: q(0.5), p90: q(0.9), min: s[0]!, max: s[s.length - 1]!, mean: s.reduce((a, b) => a + b, 0) / s.length };
}

/**
 * Per-query latency over a replicated catalog: each query runs `reps` times back to back and
 * its time is the total / reps (workerd's clock steps by 1 ms). The three searchers alternate
 * query by query so background load hits all three. Build times: median of `builds` constructions.
 */
export function searchLatency(size: number, reps: number, builds: number) {
  const entries = replicated(size).map(entryOf);
  const buildIndex: number[] = [];
  const buildScan: number[] = [];
  const buildBm25: number[] = [];
  let index!: SearchIndex;
  let scan!: SubstringScan;
  let bm25!: PlainBm25;
  for (let i = 0; i < builds; i++) {
    let t0 = performance.now();
    index = new SearchIndex(entries);
    buildIndex.push(performance.now() - t0);
    t0 = performance.now();
    scan = new SubstringScan(entries);
    buildScan.push(performance.now() - t0);
    t0 = performance.now();
    bm25 = new PlainBm25(entries);
    buildBm25.push(performance.now() - t0);
  }
  const searchers: Array<[Searcher, number[]]> = [
    [index, []],
    [scan, []],
    [bm25, []],
  ];
  for (const q of QUERIES) for (const [s] of searchers) s.search(q.query, LIMIT);
  for (const q of QUERIES) {
    for (const [s, samples] of searchers) {
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) s.search(q.query, LIMIT);
      samples.push((performance.now() - t0) / reps);
    }
  }
  return {
    tools: entries.length,
    queries: QUERIES.length,
    reps,
    // `samples`: per-query times in query order, for the harness's per-block spread.
    index: { perQuery: stats(searchers[0]![1]), build: stats(buildIndex), samples: searchers[0]![1] },
    substring: { perQuery: stats(searchers[1]![1]), build: stats(buildScan), samples: searchers[1]![1] },
    bm25: { perQuery: stats(searchers[2]![1]), build: stats(buildBm25), samples: searchers[2]![1] },
  };
}

function pluginOf(tools: FixtureTool[]): ToolPlugin {
  return {
    id: "bench",
    name: "Bench catalog",
    description: "Fixture tools (bench/fixtures/search-tools.json)",
    origin: "external",
    tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters, execute: () => null })),
  };
}

/** Evenly spaced picks from the fixtures (all services represented), or the replicated set. */
function catalogOf(n: number): FixtureTool[] {
  if (n >= TOOLS.length) return replicated(n);
  return Array.from({ length: n }, (_, i) => TOOLS[Math.floor((i * TOOLS.length) / n)]!);
}

/** JSON bytes of the `tools` a turn sends the model: code mode (engaged) vs direct exposure. */
export function surfaceSizes(sizes: number[]) {
  const languages = CODE_MODE_DEFAULTS.languages;
  return sizes.map((n) => {
    const projection = buildCatalog({ plugins: [pluginOf(catalogOf(n))], policy: {} });
    const codeMode = modelSurface(projection, { kind: "code_mode", languages });
    const direct = modelSurface(projection, { kind: "direct" });
    const quick = renderQuickIndex(projection.entries);
    return {
      tools: projection.entries.length,
      codeModeBytes: encoder.encode(JSON.stringify(codeMode)).length,
      codeModeTools: codeMode.length,
      directBytes: encoder.encode(JSON.stringify(direct)).length,
      directTools: direct.length,
      quickIndexLines: quick.lines.length,
      quickIndexOmitted: quick.omitted,
    };
  });
}
