/**
 * Report, section 5: catalog search quality (three searchers × five retrieval sets, goals judged
 * on the held-out set; the static-vector experiment quoted), search latency over 10,000 tools, and the model-visible surface.
 * Pure. The prose and figures are those of the catalog section as reworked with the search
 * fixtures; the latency table adds the spread over blocks of consecutive queries.
 */
import type { CatalogFigures, Miss, QualitySet, Searcher } from "./measure-catalog.ts";
import { ms, speed, table, x } from "./report-format.ts";

export function reportCatalog(f: CatalogFigures): string[] {
  const { quality: q, latency: lat, surface } = f;
  const lines: string[] = [];
  const L = (s = "") => lines.push(s);
  const pct = (x: number) => x.toFixed(3);
  const signed = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
  const byId = (id: string): QualitySet => {
    const set = q.sets.find((x) => x.id === id);
    if (!set) throw new Error(`no retrieval set ${id} in the bench worker's reply`);
    return set;
  };
  const fresh = q.sets.find((x) => x.heldOut);
  if (!fresh) throw new Error("no held-out set in the bench worker's reply");
  const dev = q.sets.filter((x) => !x.heldOut);
  const sameTools = dev.filter((x) => x.toolsFile === byId("dev1").toolsFile);
  const firstFresh = byId("fresh");
  L("## 5. Catalog: search and model-visible surface (issue 4)");
  L();
  L("### 5.1 Search quality");
  L();
  L("`catalog.search` runs SearchIndex (src/catalog/search-index.ts): BM25F over five fields of a tool (name, label, description,");
  L("parameter names, parameter descriptions), tokens in any script (src/catalog/search-tokens.ts: Unicode letters and digits, NFKC,");
  L("folded diacritics, camelCase parts, CJK bigrams) stemmed with Porter2 (wink-porter2-stemmer), query words of 4+ characters also");
  L("matching the longer indexed words they begin, and Snowball English stop words at half weight. No synonym or abbreviation table.");
  L("Its parameters (field weights and b, k1, the stop-word weight) were chosen on the three first development sets, then frozen.");
  L();
  L("Retrieval sets (bench/fixtures/, listed in bench/retrieval-sets.ts), each query with one expected tool, phrased the way a user");
  L("asks or a model searches (paraphrases, task descriptions, abbreviations, slang and jargon), not tool names:");
  L();
  L(
    `- **development sets** over ${byId("dev1").toolsFile} (${byId("dev1").tools} tools from ${byId("dev1").servers} services in the style of public MCP servers:`,
  );
  L(
    "  GitHub, Slack, Jira, Google Workspace, Postgres, Stripe, AWS, Kubernetes, …): " +
      sameTools.map((x) => `${x.queriesFile} (${x.index.queries} queries)`).join(", ") +
      ".",
  );
  L("  The misses of all three shaped the old hand-written vocabulary, and all three were used to choose the present method, so");
  L("  their figures are optimistic for SearchIndex.");
  L(
    `- **the first fresh set**, now development data: ${firstFresh.toolsFile} (${firstFresh.tools} tools from ${firstFresh.servers} services across many domains) and`,
  );
  L(`  ${firstFresh.queriesFile} (${firstFresh.index.queries} queries). It was written after SearchIndex was frozen and was its held-out set; its`);
  L("  misses were read afterwards and the static-vector experiment below was shaped on it, so it no longer counts as held out.");
  L(`- **held-out set**: ${fresh.toolsFile} (${fresh.tools} tools from ${fresh.servers} services: dev tools and cloud, chat and productivity, CRM`);
  L("  and support desks, e-signature and court records, payments, accounting, banking, brokerage and filings, commerce, shipping");
  L("  and fleets, food delivery and restaurants, insurance, real estate, flights, hotels, rides, transit, parking, maps, vehicles,");
  L("  weather, clinic, pharmacy, wearables, HR, hiring and payroll, LMS, libraries, translation, census, space, literature and");
  L("  preprints, earthquakes, encyclopedia, music, lyrics, tickets, video, films, social media, news, games, streaming, sports,");
  L("  smart home, utilities, solar, farming, security, identity, breach lookups)");
  L(`  and ${fresh.queriesFile} (${fresh.index.queries} queries, one per tool), written by a separate writer who saw neither the method, the`);
  L("  code, the other sets nor any result, after both SearchIndex and the static-vector experiment were frozen; nothing was");
  L("  changed after its results were seen. This is the honest estimate; the goals are judged on it alone.");
  L();
  L(`A hit is the expected tool in the first ${q.limit} results (\`searchDefaultLimit\`). Every searcher gets the same CatalogEntry objects, in`);
  L('the bench worker. Baselines: a **substring scan** (score = number of distinct query words contained in `name + " " + description`,');
  L("lowercased; ties in catalog order) and **plain BM25 + stemming** (bench/bench-catalog.ts: the same tokens and Porter2 stemmer as");
  L("SearchIndex over one field holding everything SearchIndex reads, k1 = 1.2, b = 0.75; no field weights, stop-word handling or");
  L("expansion).");
  L();
  L("| query set | searcher | recall@1 | recall@8 | MRR@8 |");
  L("|---|---|---|---|---|");
  const label = (x: QualitySet) =>
    x.heldOut
      ? `**held out**: ${x.queriesFile} (${x.index.queries} queries, ${x.tools} tools)`
      : `development: ${x.queriesFile} (${x.index.queries} queries, ${x.tools} tools)`;
  for (const x of [fresh, ...dev]) {
    L(`| ${label(x)} | substring scan | ${pct(x.substring.recallAt1)} | ${pct(x.substring.recallAt8)} | ${pct(x.substring.mrrAt8)} |`);
    L(`| ${label(x)} | plain BM25 + stemming | ${pct(x.bm25.recallAt1)} | ${pct(x.bm25.recallAt8)} | ${pct(x.bm25.mrrAt8)} |`);
    L(`| ${label(x)} | **SearchIndex** | ${pct(x.index.recallAt1)} | ${pct(x.index.recallAt8)} | ${pct(x.index.mrrAt8)} |`);
  }
  L();
  const diff = (x: QualitySet) =>
    `recall@1 ${signed(x.index.recallAt1 - x.bm25.recallAt1)}, recall@8 ${signed(x.index.recallAt8 - x.bm25.recallAt8)}, MRR@8 ${signed(x.index.mrrAt8 - x.bm25.mrrAt8)}`;
  L("SearchIndex − plain BM25: " + [fresh, ...dev].map((x) => `${x.heldOut ? "held-out set" : x.queriesFile} ${diff(x)}`).join("; ") + ".");
  const notBelow = q.sets.every((x) => (["recallAt1", "recallAt8", "mrrAt8"] as const).every((k) => x.index[k] >= x.bm25[k]));
  L();
  L(
    `Verdicts (held-out set): recall@8 ${pct(fresh.index.recallAt8)} against a goal of 0.95, **${fresh.index.recallAt8 >= 0.95 ? "met" : "not met"}**; recall@1`,
  );
  L(
    `${pct(fresh.index.recallAt1)} against 0.70, **${fresh.index.recallAt1 >= 0.7 ? "met" : "not met"}**. SearchIndex is ${notBelow ? "never below" : "**below**"} plain BM25 on any set and metric.`,
  );
  L('The misses below are mostly vocabulary the tool text does not contain (a ticker for a stock quote, "Uber" for a ride, "tweet"');
  L('for an X post, "Lakers" for sports scores, "ack" for acknowledging an incident): word matching cannot bridge them. Two general');
  L("semantic signals were tried, both from well-kept public data and neither tuned on a held-out set:");
  L("");
  L("- a general thesaurus, on the development sets (WordNet 3.1 synonyms, with and without hypernyms, at weights 0.2–0.5): it gained");
  L("  0.01–0.02 recall@8 and lost recall@1, for 350–650 KB gzipped of data;");
  L("- static word vectors (GloVe, 6B tokens, reduced to the most frequent words and dimensions that fit a Worker; bench/experiments/,");
  L("  `node scripts/build-word-vectors.mjs && node bench/experiments/run.mjs static-vectors --write`), frozen on the first fresh set");
  L("  before the held-out set was written:");
  L("");
  if (f.staticVectors) for (const line of f.staticVectors.split("\n")) L(line);
  else L("(bench/experiments/static-vectors.results.md is missing: run the command above.)");
  L("");
  L("Neither is worth its weight in the bundle: the vectors add more gzip than the whole worker without the TypeScript compiler");
  L("(section 3) for about 0.015 recall on the held-out set, and neither comes near the goal. Closing the gap needs a sentence");
  L("encoder (the smallest general ones weigh 20+ MB, over the 10 MB Worker limit, and cannot be fetched on this machine) or a");
  L("hosted embedding model (Workers AI), which the local runtime cannot run or measure. For reference, the previous SearchIndex with");
  L("the hand-written vocabulary (commit 79949ec), measured once on the first fresh set outside this harness: recall@1 0.560,");
  L("recall@8 0.840, MRR@8 0.662.");
  L();
  const esc = (x: unknown) => String(x).replace(/\|/g, "\\|");
  const missTable = (rows: Miss[], withRank: boolean) => {
    L(withRank ? "| query | expected | rank | got (top 3) |" : "| query | expected | got (top 3) |");
    L(withRank ? "|---|---|---|---|" : "|---|---|---|");
    for (const m of rows) {
      const got = m.top.length ? m.top.map((n: string) => `\`${n}\``).join(", ") : "(nothing)";
      L(withRank ? `| ${esc(m.query)} | \`${m.expected}\` | ${m.rank} | ${got} |` : `| ${esc(m.query)} | \`${m.expected}\` | ${got} |`);
    }
  };
  const missSections = (setName: string, r: QualitySet["index"]) => {
    const out8 = r.misses.filter((m) => m.rank === null);
    const not1 = r.misses.filter((m) => m.rank !== null);
    L("<details>");
    L(`<summary>${setName}: SearchIndex misses at 8: ${out8.length} of ${r.queries} queries (expected tool not in the first ${q.limit})</summary>`);
    L();
    missTable(out8, false);
    L();
    L("</details>");
    L();
    L("<details>");
    L(`<summary>${setName}: SearchIndex misses at 1 only: ${not1.length} queries (expected tool ranked 2–${q.limit})</summary>`);
    L();
    missTable(not1, true);
    L();
    L("</details>");
    L();
  };
  missSections(`Held-out set ${fresh.queriesFile}`, fresh.index);
  for (const x of dev) missSections(`Development set ${x.queriesFile}`, x.index);

  L(`### 5.2 Search latency over ${lat.tools.toLocaleString("en-US")} tools`);
  L();
  L(
    `The ${byId("dev1").tools} development tools replicated to ${lat.tools.toLocaleString("en-US")} (copies get an account-style suffix in the name and description, e.g.`,
  );
  L(
    `\`github_create_pull_request_acme\`), in the bench worker. Each of the ${lat.queries} queries of ${byId("dev1").queriesFile} runs ${lat.reps}× back to back (limit ${q.limit}) and`,
  );
  L("counts as total / reps (1 ms clock); the three searchers alternate query by query; one warm-up pass. Build: the SearchIndex");
  L(
    `constructor (built lazily by the first \`catalog.search\` of a turn, then kept), the plain BM25 constructor, lowercasing the haystacks; median of ${lat.index.build.n}.`,
  );
  L();
  L(
    `The per-query times are also cut into ${f.blocks} blocks of consecutive queries (about ${Math.round(lat.queries / f.blocks)} each, in the order they ran); the block`,
  );
  L("columns give the median and IQR over blocks of each block's per-query median, and of each block's time over the substring scan's");
  L("time on the same block (a burst of load lands in one block, on all three searchers).");
  L();
  const lrow = (name: string, key: Searcher, isBase: boolean) => {
    const r = lat[key];
    const b = f.blockMedians[key];
    const medians = lat.substring.perQuery.median / r.perQuery.median;
    const vsMedian = isBase ? "1×" : !Number.isFinite(medians) ? "—" : medians >= 1 ? `${x(medians)} faster` : `${x(1 / medians)} slower`;
    return [
      name,
      ms(r.perQuery.median),
      ms(r.perQuery.p90),
      ms(r.perQuery.min),
      ms(r.perQuery.max),
      vsMedian,
      `${ms(b.median)} (IQR ${ms(b.q1)}–${ms(b.q3)})`,
      isBase ? "1×" : speed(f.vsSubstring[key]),
      ms(r.build.median),
    ];
  };
  for (const line of table(
    [
      "searcher",
      "per query median (ms)",
      "p90 (ms)",
      "min (ms)",
      "max (ms)",
      "ratio vs substring scan (median)",
      `per-query median per block (ms; ${f.blocks} blocks)`,
      "time vs substring scan (per block)",
      "build (ms, median)",
    ],
    [
      lrow("**baseline**: substring scan", "substring", true),
      lrow("**baseline**: plain BM25 + stemming", "bm25", false),
      lrow("SearchIndex", "index", false),
    ],
  ))
    L(line);
  L();
  L(`The first search of a turn also pays the index build (${ms(lat.index.build.median)} ms at ${lat.tools.toLocaleString("en-US")} tools).`);
  L();

  L("### 5.3 Model-visible surface");
  L();
  L("JSON bytes of the `tools` a turn sends the model (`modelSurface`, src/turns/surface.ts, as `POST …/turns` returns them), for a");
  L("catalog built by `buildCatalog` from fixture tools (10 and 100: evenly spaced picks across services; 1,000 and 10,000: the");
  L("replicated set of 5.2). Code mode: `exec` (with the bounded quick index) + `wait`. Baseline: direct exposure, every tool with its");
  L("description and schema.");
  L();
  L("| tools in catalog | code mode (bytes) | quick-index lines (tools not listed) | **baseline**: direct (bytes) | code mode / direct |");
  L("|---|---|---|---|---|");
  for (const x of surface) {
    L(
      `| ${x.tools.toLocaleString("en-US")} | ${x.codeModeBytes.toLocaleString("en-US")} | ${x.quickIndexLines} (${x.quickIndexOmitted.toLocaleString("en-US")}) | ${x.directBytes.toLocaleString("en-US")} | ${((100 * x.codeModeBytes) / x.directBytes).toFixed(2)}% |`,
    );
  }
  L();
  L("The quick index stops at 40 entries / 4,000 characters (src/turns/quick-index.ts), so the code-mode surface stops growing once it is");
  L("full; the rest is reached through `catalog.search`.");
  L();
  return lines;
}
