/**
 * Experiment (not what `catalog.search` runs): does a static semantic signal lift recall? SearchIndex's
 * BM25F fused with the cosine between SIF-weighted averages of GloVe word vectors of the query and
 * of each tool (Arora et al., "A Simple but Tough-to-Beat Baseline for Sentence Embeddings", 2017).
 * The table comes from scripts/build-word-vectors.mjs (20,000 words × 48 dimensions, int8).
 *
 * Frozen before the second fresh set was written (BENCHMARKS.md, section 5.1): word weight
 * a / (a + p(w)) with a = 1e-4 and p(w) from Zipf's law over the word's frequency rank; tool text =
 * name 1, description 1, parameter names 0.5, parameter descriptions 0.3; score = 0.4 × BM25F /
 * (best BM25F of the query) + 0.6 × cosine; a tool BM25F does not match is kept when its cosine is ≥ 0.5.
 *
 *   node scripts/build-word-vectors.mjs && node bench/experiments/run.mjs static-vectors [--write]
 *
 * `--write` also saves the table to bench/experiments/static-vectors.results.md, which `npm run bench`
 * quotes in section 5.1 (the bench itself does not download the 110 MB source package).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { SearchIndex } from "../../src/catalog";
import type { CatalogEntry } from "../../src/catalog";
import { checkSet, entryOf, quality, SETS } from "../retrieval-sets";
import type { FixtureTool } from "../retrieval-sets";

const TABLE = "bench/out/word-vectors-20000x48.bin";
const RESULTS = "bench/experiments/static-vectors.results.md";
const SIF_A = 1e-4;
const ZIPF_H = Math.log(400_000) + 0.5772;
const FIELD_WEIGHTS = { name: 1, description: 1, paramNames: 0.5, paramText: 0.3 };
const BM25_SHARE = 0.4;
const MIN_COSINE = 0.5;

type Table = { dims: number; rows: Map<string, number>; vectors: Float32Array };

function readTable(path: string): Table {
  // A copy as a plain Uint8Array: a Buffer's slice() is a view into a shared pool.
  const b = new Uint8Array(readFileSync(path));
  let at = 0;
  const line = () => {
    const end = b.indexOf(10, at);
    const text = new TextDecoder().decode(b.subarray(at, end));
    at = end + 1;
    return text;
  };
  if (line() !== "CMWV1") throw new Error(`${path}: not a word-vector table`);
  const n = Number(line());
  const dims = Number(line());
  const rows = new Map<string, number>();
  for (let i = 0; i < n; i++) rows.set(line(), i);
  at += (4 - (at % 4)) % 4;
  const scales = new Float32Array(b.slice(at, at + 4 * dims).buffer);
  const codes = new Int8Array(b.slice(at + 4 * dims, at + 4 * dims + n * dims).buffer);
  const vectors = new Float32Array(n * dims);
  for (let i = 0; i < n * dims; i++) vectors[i] = codes[i]! * scales[i % dims]!;
  return { dims, rows, vectors };
}

const table = readTable(TABLE);
const words = (text: string) => [...text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").matchAll(/[A-Za-z0-9]+/g)].map(([w]) => w.toLowerCase());
const weight = (row: number) => SIF_A / (SIF_A + 1 / ((row + 1) * ZIPF_H));

function embed(parts: ReadonlyArray<readonly [string, number]>): Float32Array | null {
  const { dims, rows, vectors } = table;
  const v = new Float32Array(dims);
  let any = false;
  for (const [text, fieldWeight] of parts) {
    for (const w of words(text)) {
      const row = rows.get(w);
      if (row === undefined) continue;
      any = true;
      const k = fieldWeight * weight(row);
      for (let d = 0; d < dims; d++) v[d]! += k * vectors[row * dims + d]!;
    }
  }
  if (!any) return null;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function toolText(t: FixtureTool): Array<[string, number]> {
  const props = ((t.parameters as { properties?: Record<string, { description?: unknown }> }).properties ?? {}) as Record<
    string,
    { description?: unknown }
  >;
  const paramText = Object.values(props)
    .map((p) => (typeof p?.description === "string" ? p.description : ""))
    .join(" ");
  return [
    [t.name, FIELD_WEIGHTS.name],
    [t.description, FIELD_WEIGHTS.description],
    [Object.keys(props).join(" "), FIELD_WEIGHTS.paramNames],
    [paramText, FIELD_WEIGHTS.paramText],
  ];
}

class StaticVectorSearch {
  private readonly index: SearchIndex;
  private readonly vectors: Array<Float32Array | null>;
  constructor(
    private readonly entries: readonly CatalogEntry[],
    tools: readonly FixtureTool[],
  ) {
    this.index = new SearchIndex(entries);
    this.vectors = tools.map((t) => embed(toolText(t)));
  }
  search(query: string, limit: number): CatalogEntry[] {
    const lexical = new Map<CatalogEntry, number>();
    let best = 0;
    for (const { entry, score } of this.index.scored(query, this.entries.length)) {
      lexical.set(entry, score);
      best = Math.max(best, score);
    }
    const q = embed([[query, 1]]);
    const ranked: Array<{ i: number; s: number }> = [];
    this.entries.forEach((entry, i) => {
      const v = this.vectors[i];
      let cos = -1;
      if (q && v) {
        cos = 0;
        for (let d = 0; d < q.length; d++) cos += q[d]! * v[d]!;
      }
      const bm = lexical.get(entry);
      if (bm === undefined && cos < MIN_COSINE) return;
      ranked.push({ i, s: BM25_SHARE * ((bm ?? 0) / (best || 1)) + (1 - BM25_SHARE) * cos });
    });
    ranked.sort((a, b) => b.s - a.s || a.i - b.i);
    return ranked.slice(0, limit).map((x) => this.entries[x.i]!);
  }
}

const pct = (x: number) => x.toFixed(3);
const kib = (n: number) => (n / 1024).toFixed(0);
const raw = readFileSync(TABLE);
const out: string[] = [
  `Static word vectors (${table.rows.size.toLocaleString("en-US")} words × ${table.dims} dimensions, int8: ${kib(raw.length)} KiB, ${kib(gzipSync(raw, { level: 9 }).length)} KiB gzip)`,
  "fused with SearchIndex, as frozen in bench/experiments/static-vectors.ts:",
  "",
  "| set | queries | tools | SearchIndex recall@1 / recall@8 / MRR@8 | + static vectors recall@1 / recall@8 / MRR@8 |",
  "|---|---|---|---|---|",
];
for (const set of SETS) {
  checkSet(set);
  const entries = set.tools.map(entryOf);
  const base = quality(new SearchIndex(entries), set.queries);
  const semantic = quality(new StaticVectorSearch(entries, set.tools), set.queries);
  const fmt = (r: typeof base) => `${pct(r.recallAt1)} / ${pct(r.recallAt8)} / ${pct(r.mrrAt8)}`;
  out.push(
    `| ${set.heldOut ? `**${set.queriesFile} (held out)**` : set.queriesFile} | ${set.queries.length} | ${set.tools.length} | ${fmt(base)} | ${fmt(semantic)} |`,
  );
}
console.log(out.join("\n"));
if (process.argv.includes("--write")) writeFileSync(RESULTS, out.join("\n") + "\n");
