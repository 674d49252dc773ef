import { isStopStem } from "./search-stopwords";
import { tokenize } from "./search-tokens";
import type { CatalogEntry } from "./types";

/**
 * Ranked retrieval for `catalog.search`: BM25F (Robertson & Zaragoza, "The Probabilistic
 * Relevance Framework: BM25 and Beyond", 2009) over five fields of a tool, with Porter2
 * stemming (./search-tokens.ts) and one query expansion that needs no word list: a query word
 * of 4+ characters also matches, more weakly, the indexed words it begins ("auth" →
 * authentication). Query words on the Snowball English stop list count half (./search-stopwords.ts),
 * and a tool that matches only those, when the query has other words, is left out.
 * No synonym or abbreviation tables: what a query says must occur in the tool.
 *
 * Every field's term frequency is normalised by that field's length, weighted, summed into one
 * pseudo-frequency per (term, tool) and saturated once (k1). The pseudo-frequencies depend only
 * on the catalog, so they are computed when the index is built: a query costs the postings of
 * its terms. Built once per turn's catalog (lazily, by the first search).
 *
 * Field weights and b were chosen on the development query sets in bench/fixtures/ and then
 * frozen before the fresh held-out set was written (BENCHMARKS.md, section 5.1).
 */
type Field = { text: (e: CatalogEntry) => string; weight: number; b: number };

const FIELDS: readonly Field[] = [
  { text: (e) => e.toolName, weight: 1, b: 0.3 },
  { text: (e) => e.label ?? "", weight: 1, b: 0.3 },
  { text: (e) => e.description, weight: 1, b: 0.75 },
  { text: paramNames, weight: 0.25, b: 0.75 },
  { text: paramText, weight: 0.5, b: 0.75 },
];
const K1 = 0.9;
const STOP_WORD_WEIGHT = 0.5;
const PREFIX_WEIGHT = 0.3;
const PREFIX_MIN_CHARS = 4;
const MAX_PREFIX_TERMS = 16;
/** Added to a tool whose exact name is the whole query, so naming a tool always finds it first. */
const EXACT_NAME_BONUS = 100;

function properties(entry: CatalogEntry): object | undefined {
  const props = (entry.parameters as { properties?: unknown }).properties;
  return props && typeof props === "object" ? props : undefined;
}

function paramNames(entry: CatalogEntry): string {
  const props = properties(entry);
  return props ? Object.keys(props).join(" ") : "";
}

/** First-level parameter descriptions, bounded: they name what a tool acts on. */
function paramText(entry: CatalogEntry): string {
  const props = properties(entry);
  if (!props) return "";
  const parts: string[] = [];
  for (const p of Object.values(props)) {
    const d: unknown = p && typeof p === "object" ? (p as { description?: unknown }).description : undefined;
    if (typeof d === "string") parts.push(d.slice(0, 200));
  }
  return parts.join(" ").slice(0, 2000);
}

/** The tokens of each field of one tool. */
function fieldTokens(entry: CatalogEntry): string[][] {
  return FIELDS.map((field) => tokenize(field.text(entry)));
}

type Postings = { docs: number[]; tfs: number[] };

/** Higher score first; ties go to catalog order (deterministic). */
function better(score: number, doc: number, than: { i: number; s: number }): boolean {
  return score > than.s || (score === than.s && doc < than.i);
}

export class SearchIndex {
  /** Keyed by tool/query-derived strings: a Map, never a plain object ("constructor", "__proto__"). */
  private readonly postings = new Map<string, Postings>();
  /** Index terms in sorted order, for prefix expansion; built on first use. */
  private sortedTerms?: string[];
  private scratch?: Float64Array;
  private contentScratch?: Uint8Array;

  constructor(private readonly entries: readonly CatalogEntry[]) {
    const docs = entries.map(fieldTokens);
    const avg = FIELDS.map((_, f) => Math.max(1, docs.reduce((sum, d) => sum + d[f]!.length, 0) / Math.max(1, docs.length)));
    const pseudo = new Map<string, number>();
    docs.forEach((fields, doc) => {
      // BM25F: each occurrence adds its field's weight over that field's length normalisation.
      pseudo.clear();
      fields.forEach((tokens, f) => {
        const { weight, b } = FIELDS[f]!;
        const add = weight / (1 - b + (b * tokens.length) / avg[f]!);
        for (const t of tokens) pseudo.set(t, (pseudo.get(t) ?? 0) + add);
      });
      for (const [term, tf] of pseudo) {
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = { docs: [], tfs: [] }));
        list.docs.push(doc);
        list.tfs.push(tf);
      }
    });
  }

  /** Indexed terms that `prefix` begins (not `prefix` itself), at most MAX_PREFIX_TERMS. */
  private withPrefix(prefix: string): string[] {
    this.sortedTerms ??= [...this.postings.keys()].sort();
    const list = this.sortedTerms;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < list.length && out.length < MAX_PREFIX_TERMS && list[i]!.startsWith(prefix); i++) {
      if (list[i] !== prefix) out.push(list[i]!);
    }
    return out;
  }

  /**
   * Query terms with weights: the query's own terms at 1 (stop words at STOP_WORD_WEIGHT), indexed
   * words that a content term begins at PREFIX_WEIGHT.
   */
  private queryTerms(query: string): Map<string, number> {
    const terms = new Map<string, number>();
    for (const t of tokenize(query)) terms.set(t, isStopStem(t) ? STOP_WORD_WEIGHT : 1);
    for (const [t, weight] of [...terms]) {
      if (weight < 1 || t.length < PREFIX_MIN_CHARS) continue;
      for (const longer of this.withPrefix(t)) if (!terms.has(longer)) terms.set(longer, PREFIX_WEIGHT);
    }
    return terms;
  }

  /** Entries ranked by relevance (only those matching at least one query term), at most `limit`. */
  search(query: string, limit: number): CatalogEntry[] {
    return this.scored(query, limit).map((x) => x.entry);
  }

  /** `search` with each entry's BM25F score (what an experiment fusing another signal needs). */
  scored(query: string, limit: number): Array<{ entry: CatalogEntry; score: number }> {
    const q = query.trim();
    if (q.length === 0 || limit <= 0) return [];
    const n = this.entries.length;
    // Dense per-document accumulators, reused across queries: a query costs its postings.
    const scores = (this.scratch ??= new Float64Array(n));
    const content = (this.contentScratch ??= new Uint8Array(n));
    const touched: number[] = [];
    const terms = this.queryTerms(q);
    // A tool that matches only the stop words of a query that has other words is no match.
    let needContent = false;
    for (const term of terms.keys()) if (!isStopStem(term)) needContent = true;
    for (const [term, weight] of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const df = list.docs.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const isContent = isStopStem(term) ? 0 : 1;
      for (let k = 0; k < df; k++) {
        const doc = list.docs[k]!;
        const tf = list.tfs[k]!;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += (weight * idf * tf * (K1 + 1)) / (tf + K1);
        content[doc]! |= isContent;
      }
    }
    const lowered = q.toLowerCase();
    // Keep only the best `limit` (small) instead of sorting every touched document.
    const ranked: Array<{ i: number; s: number }> = [];
    for (const doc of touched) {
      const entry = this.entries[doc]!;
      let score = scores[doc]!;
      const matchedContent = content[doc] === 1;
      scores[doc] = 0;
      content[doc] = 0;
      if (needContent && !matchedContent) continue;
      if (entry.toolName.toLowerCase() === lowered || entry.callableName.toLowerCase() === lowered) score += EXACT_NAME_BONUS;
      if (ranked.length === limit && !better(score, doc, ranked[limit - 1]!)) continue;
      let at = ranked.length === limit ? limit - 1 : ranked.length;
      while (at > 0 && better(score, doc, ranked[at - 1]!)) {
        ranked[at] = ranked[at - 1]!;
        at--;
      }
      ranked[at] = { i: doc, s: score };
      if (ranked.length > limit) ranked.length = limit;
    }
    return ranked.map((x) => ({ entry: this.entries[x.i]!, score: x.s }));
  }
}
