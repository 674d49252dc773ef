import type { CatalogEntry } from "./types";

/**
 * Ranked retrieval over tool name, label, description and parameter names: BM25 with
 * per-field weights, light stemming and a boost for exact name hits. Built once per turn.
 */
const FIELD_WEIGHTS = { name: 3, label: 2, description: 1, params: 1.5 } as const;
const K1 = 1.2;
const B = 0.75;
const STOP = new Set("a an the of to for and or in on by with from into is are be that this it as at my me i".split(" "));

export function tokenize(text: string): string[] {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0 && !STOP.has(w));
  return words.map(stem);
}

function stem(w: string): string {
  if (w.length > 5 && w.endsWith("ing")) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith("ies")) return w.slice(0, -3) + "y";
  if (w.length > 4 && w.endsWith("es") && /(s|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  if (w.length > 4 && w.endsWith("ed")) return w.slice(0, -2);
  return w;
}

type Doc = { tf: Map<string, number>; len: number; nameTokens: Set<string> };

function paramNames(entry: CatalogEntry): string {
  const props = (entry.parameters as { properties?: unknown }).properties;
  return props && typeof props === "object" ? Object.keys(props).join(" ") : "";
}

export class SearchIndex {
  private readonly docs: Doc[];
  private readonly df = new Map<string, number>();
  private readonly avgLen: number;

  constructor(private readonly entries: readonly CatalogEntry[]) {
    this.docs = entries.map((e) => {
      const tf = new Map<string, number>();
      const add = (text: string, weight: number) => {
        for (const t of tokenize(text)) tf.set(t, (tf.get(t) ?? 0) + weight);
      };
      add(e.toolName, FIELD_WEIGHTS.name);
      if (e.label) add(e.label, FIELD_WEIGHTS.label);
      add(e.description, FIELD_WEIGHTS.description);
      add(paramNames(e), FIELD_WEIGHTS.params);
      let len = 0;
      for (const v of tf.values()) len += v;
      return { tf, len, nameTokens: new Set(tokenize(e.toolName)) };
    });
    for (const d of this.docs) for (const t of d.tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    this.avgLen = this.docs.reduce((s, d) => s + d.len, 0) / Math.max(1, this.docs.length);
  }

  /** Entries ranked by relevance (only those matching at least one query term). */
  search(query: string, limit: number): CatalogEntry[] {
    const q = query.trim();
    if (q.length === 0 || limit <= 0) return [];
    const terms = [...new Set(tokenize(q))];
    const lowered = q.toLowerCase();
    const n = this.docs.length;
    const scored: Array<{ i: number; s: number }> = [];
    for (let i = 0; i < n; i++) {
      const d = this.docs[i]!;
      let s = 0;
      let nameHits = 0;
      for (const t of terms) {
        const f = d.tf.get(t);
        if (!f) continue;
        const df = this.df.get(t) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        s += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.len) / this.avgLen));
        if (d.nameTokens.has(t)) nameHits++;
      }
      const entry = this.entries[i]!;
      if (entry.toolName.toLowerCase() === lowered || entry.callableName.toLowerCase() === lowered) s += 100;
      if (s > 0) scored.push({ i, s: s * (1 + 0.1 * nameHits) });
    }
    scored.sort((a, b) => b.s - a.s || a.i - b.i);
    return scored.slice(0, limit).map((x) => this.entries[x.i]!);
  }
}
