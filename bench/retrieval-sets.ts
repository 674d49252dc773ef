/**
 * The retrieval sets of section 5.1 and how they are scored, shared by the bench worker
 * (bench-catalog.ts) and the experiments run in Node (bench/experiments/). Each query has one
 * expected tool; a set is "held out" when nothing about the method was chosen after seeing
 * its results.
 */
import { opaqueToolId } from "../src/catalog";
import type { CatalogEntry } from "../src/catalog";
import { CODE_MODE_DEFAULTS } from "../src/config";
import type { JsonSchema } from "../src/tools";
import fixtureTools from "./fixtures/search-tools.json";
import fixtureQueries from "./fixtures/search-queries.json";
import fixtureDev2 from "./fixtures/search-queries-heldout.json";
import fixtureDev3 from "./fixtures/search-queries-heldout2.json";
import freshTools from "./fixtures/search-tools-fresh.json";
import freshQueries from "./fixtures/search-queries-fresh.json";
import fresh2Tools from "./fixtures/search-tools-fresh2.json";
import fresh2Queries from "./fixtures/search-queries-fresh2.json";

export type FixtureTool = { server: string; name: string; description: string; parameters: JsonSchema };
export type FixtureQuery = { query: string; expected: string };

/** A retrieval set: its tools, its queries, and whether its results could have shaped the method. */
export type RetrievalSet = { id: string; queriesFile: string; toolsFile: string; heldOut: boolean; tools: FixtureTool[]; queries: FixtureQuery[] };

export const TOOLS = fixtureTools as FixtureTool[];
/** The first development set (also the latency queries). */
export const QUERIES = fixtureQueries as FixtureQuery[];
/** 8: what catalog.search returns by default. */
export const LIMIT = CODE_MODE_DEFAULTS.searchDefaultLimit;

export const SETS: readonly RetrievalSet[] = [
  { id: "dev1", queriesFile: "search-queries.json", toolsFile: "search-tools.json", heldOut: false, tools: TOOLS, queries: QUERIES },
  {
    id: "dev2",
    queriesFile: "search-queries-heldout.json",
    toolsFile: "search-tools.json",
    heldOut: false,
    tools: TOOLS,
    queries: fixtureDev2 as FixtureQuery[],
  },
  {
    id: "dev3",
    queriesFile: "search-queries-heldout2.json",
    toolsFile: "search-tools.json",
    heldOut: false,
    tools: TOOLS,
    queries: fixtureDev3 as FixtureQuery[],
  },
  // Held out for the BM25F method (session 3); its misses were then read, so it is development data now.
  {
    id: "fresh",
    queriesFile: "search-queries-fresh.json",
    toolsFile: "search-tools-fresh.json",
    heldOut: false,
    tools: freshTools as FixtureTool[],
    queries: freshQueries as FixtureQuery[],
  },
  // Written by someone who saw neither the method nor any result, after the static-vector experiment was frozen.
  {
    id: "fresh2",
    queriesFile: "search-queries-fresh2.json",
    toolsFile: "search-tools-fresh2.json",
    heldOut: true,
    tools: fresh2Tools as FixtureTool[],
    queries: fresh2Queries as FixtureQuery[],
  },
];

export function entryOf(t: FixtureTool): CatalogEntry {
  return {
    id: opaqueToolId("external", "bench", t.name),
    toolName: t.name,
    callableName: t.name,
    origin: "external",
    source: "openclaw",
    description: t.description,
    parameters: t.parameters,
    directOnly: false,
  };
}

export type Searcher = { search(query: string, limit: number): CatalogEntry[] };

/** recall@1, recall@8 and MRR@8 of `searcher` over `queries`, with the queries it missed at 1. */
export function quality(searcher: Searcher, queries: readonly FixtureQuery[]) {
  let at1 = 0;
  let at8 = 0;
  let rr = 0;
  const misses: Array<{ query: string; expected: string; rank: number | null; top: string[] }> = [];
  for (const q of queries) {
    const hits = searcher.search(q.query, LIMIT).map((e) => e.toolName);
    const rank = hits.indexOf(q.expected);
    if (rank === 0) at1++;
    if (rank >= 0) {
      at8++;
      rr += 1 / (rank + 1);
    }
    if (rank !== 0) misses.push({ query: q.query, expected: q.expected, rank: rank >= 0 ? rank + 1 : null, top: hits.slice(0, 3) });
  }
  const n = queries.length;
  return { queries: n, recallAt1: at1 / n, recallAt8: at8 / n, mrrAt8: rr / n, misses };
}

/** Unknown expected tools would silently count as misses; duplicate tool names would make hits ambiguous. */
export function checkSet(set: RetrievalSet): void {
  const names = new Set(set.tools.map((t) => t.name));
  if (names.size !== set.tools.length) throw new Error(`${set.toolsFile}: duplicate tool names`);
  const unknown = set.queries.filter((q) => !names.has(q.expected)).map((q) => q.expected);
  if (unknown.length > 0) throw new Error(`${set.queriesFile}: expected tools not in ${set.toolsFile}: ${unknown.join(", ")}`);
}
