import type { CatalogEntry } from "./types";
import { ABBREVIATIONS, SYNONYM_GROUPS } from "./search-vocabulary";

/**
 * Ranked retrieval over tool name, label, description and parameter names (and, weakly,
 * parameter descriptions): BM25 with per-field weights over an inverted index, light
 * stemming, query expansion from a general vocabulary and from word prefixes (both weaker
 * than the query's own words), and a bonus for hits in the tool name.
 * Built once per turn's catalog; a query touches only documents sharing a term with it.
 */
const FIELD_WEIGHTS = { name: 3, label: 2, description: 1, params: 1.5, paramText: 0.5 } as const;
const K1 = 1.2;
const B = 0.75;
const EXPANSION_WEIGHT = 0.35;
const PREFIX_WEIGHT = 0.3;
const MAX_PREFIX_TERMS = 16;
const STOP = new Set(
  "a an the of to for and or in on by with from into is are be that this it as at my me i you your we our do does can could please how which there their them its".split(" "),
);

/** Consistent light stemmer: plural, -ing, -ed and a trailing e collapse to one stem. */
export function stem(w: string): string {
  if (w.length <= 3) return w;
  if (w.endsWith("ies") && w.length > 4) w = w.slice(0, -3) + "y";
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  if (w.length > 4 && /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

function words(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/[^A-Za-z0-9:]+/)) {
    if (!raw) continue;
    const lower = raw.toLowerCase();
    out.push(lower);
    // camelCase parts as well as the joined word ("GitHub" → github, git, hub).
    const parts = raw.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(" ");
    if (parts.length > 1) out.push(...parts);
  }
  return out;
}

export function tokenize(text: string): string[] {
  return words(text.replace(/:(?!\d)/g, " "))
    .filter((w) => w.length > 0 && !STOP.has(w))
    .map(stem);
}

const SYNONYMS: Map<string, Set<string>> = (() => {
  const m = new Map<string, Set<string>>();
  for (const group of SYNONYM_GROUPS) {
    const stems = group.map(stem);
    for (const s of stems) {
      let set = m.get(s);
      if (!set) m.set(s, (set = new Set()));
      for (const o of stems) if (o !== s) set.add(o);
    }
  }
  return m;
})();

/** Query terms with weights: the query's own stems at 1, abbreviations and synonyms lower. */
function queryTerms(query: string): Map<string, number> {
  const terms = new Map<string, number>();
  const add = (t: string, w: number) => terms.set(t, Math.max(terms.get(t) ?? 0, w));
  for (const w of words(query)) {
    const abbr = ABBREVIATIONS[w];
    if (abbr) for (const t of tokenize(abbr)) add(t, 0.9);
  }
  const own = tokenize(query);
  for (const t of own) add(t, 1);
  for (const t of own) for (const syn of SYNONYMS.get(t) ?? []) add(syn, EXPANSION_WEIGHT);
  return terms;
}

type Posting = { doc: number; tf: number };

/** Higher score first; ties go to catalog order (deterministic). */
function better(score: number, doc: number, than: { i: number; s: number }): boolean {
  return score > than.s || (score === than.s && doc < than.i);
}

function paramNames(entry: CatalogEntry): string {
  const props = (entry.parameters as { properties?: unknown }).properties;
  return props && typeof props === "object" ? Object.keys(props).join(" ") : "";
}

/** Parameter descriptions (first level), bounded: they name what a tool acts on. */
function paramText(entry: CatalogEntry): string {
  const props = (entry.parameters as { properties?: unknown }).properties;
  if (!props || typeof props !== "object") return "";
  const parts: string[] = [];
  for (const p of Object.values(props as Record<string, unknown>)) {
    const d = p && typeof p === "object" ? (p as { description?: unknown }).description : undefined;
    if (typeof d === "string") parts.push(d.slice(0, 200));
  }
  return parts.join(" ").slice(0, 2000);
}

export class SearchIndex {
  private readonly postings = new Map<string, Posting[]>();
  private readonly lengths: Float64Array;
  private readonly nameTokens: Array<Set<string>>;
  private readonly avgLen: number;
  /** Index terms in sorted order, for prefix expansion ("auth" → authentication). */
  private sortedTerms?: string[];
  private scratch?: Float64Array;
  private nameScratch?: Uint8Array;

  constructor(private readonly entries: readonly CatalogEntry[]) {
    this.lengths = new Float64Array(entries.length);
    this.nameTokens = [];
    let total = 0;
    entries.forEach((e, doc) => {
      const tf = new Map<string, number>();
      const add = (text: string, weight: number) => {
        for (const t of tokenize(text)) tf.set(t, (tf.get(t) ?? 0) + weight);
      };
      add(e.toolName, FIELD_WEIGHTS.name);
      if (e.label) add(e.label, FIELD_WEIGHTS.label);
      add(e.description, FIELD_WEIGHTS.description);
      add(paramNames(e), FIELD_WEIGHTS.params);
      add(paramText(e), FIELD_WEIGHTS.paramText);
      let len = 0;
      for (const [term, f] of tf) {
        len += f;
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = []));
        list.push({ doc, tf: f });
      }
      this.lengths[doc] = len;
      total += len;
      this.nameTokens.push(new Set(tokenize(e.toolName)));
    });
    this.avgLen = total / Math.max(1, entries.length);
  }

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

  /** Entries ranked by relevance (only those matching at least one query term). */
  search(query: string, limit: number): CatalogEntry[] {
    const q = query.trim();
    if (q.length === 0 || limit <= 0) return [];
    const n = this.entries.length;
    // Dense per-document accumulators, reused across queries: a query costs its postings.
    const scores = (this.scratch ??= new Float64Array(n));
    const nameHits = (this.nameScratch ??= new Uint8Array(n));
    const touched: number[] = [];
    const terms = queryTerms(q);
    for (const [term, weight] of [...terms]) {
      if (weight < 1 || term.length < 4) continue;
      for (const longer of this.withPrefix(term)) if (!terms.has(longer)) terms.set(longer, PREFIX_WEIGHT);
    }
    for (const [term, weight] of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      const own = weight === 1;
      for (const { doc, tf } of list) {
        const norm = tf + K1 * (1 - B + (B * this.lengths[doc]!) / this.avgLen);
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += (weight * idf * tf * (K1 + 1)) / norm;
        if (own && this.nameTokens[doc]!.has(term)) nameHits[doc]!++;
      }
    }
    const lowered = q.toLowerCase();
    // Keep only the best `limit` (small) instead of sorting every touched document.
    const ranked: Array<{ i: number; s: number }> = [];
    for (const doc of touched) {
      const entry = this.entries[doc]!;
      let score = scores[doc]! * (1 + 0.15 * nameHits[doc]!);
      if (entry.toolName.toLowerCase() === lowered || entry.callableName.toLowerCase() === lowered) score += 100;
      scores[doc] = 0;
      nameHits[doc] = 0;
      if (ranked.length === limit && !better(score, doc, ranked[limit - 1]!)) continue;
      let at = ranked.length === limit ? limit - 1 : ranked.length;
      while (at > 0 && better(score, doc, ranked[at - 1]!)) {
        ranked[at] = ranked[at - 1]!;
        at--;
      }
      ranked[at] = { i: doc, s: score };
      if (ranked.length > limit) ranked.length = limit;
    }
    return ranked.map((x) => this.entries[x.i]!);
  }
}
