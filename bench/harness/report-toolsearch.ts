/**
 * Report, section 6: Tool Search (seed 004) on a 500-tool catalog: the model-visible payload of
 * each surface, and one `tool_search_code` call against seed 004's Node-child design. Pure.
 */
import type { SurfaceName, ToolSearchFigures } from "./measure-toolsearch.ts";
import { kib, ms, msSpread, ratio, speed, speedRange, table, TIMING_HEADER, timingCells } from "./report-format.ts";
import { summarize } from "./stats.ts";

const SURFACE_LABEL: Record<SurfaceName, string> = {
  direct: "direct tools (every schema)",
  code: "Tool Search `code` (`tools.toolSearch: true`)",
  tools: 'Tool Search `tools` (`mode: "tools"`)',
  codeMode: "code mode (`exec` + `wait`, quick index in the description)",
};

/** The goal-table line: "Tool Search payload is N× smaller than direct on 500 tools". */
export function payloadVerdict(f: ToolSearchFigures): string {
  const p = f.payload;
  return `Tool Search payload is ${ratio(p.direct.bytes, p.code.bytes)} smaller than direct on ${f.catalogSize} tools (\`code\`; \`tools\`: ${ratio(p.direct.bytes, p.tools.bytes)})`;
}

/** "our tool_search_code call is N× faster than a node --permission child per call (IQR …)". */
export function latencyVerdict(f: ToolSearchFigures): string {
  return `one \`tool_search_code\` call is ${speed(f.ratio)} than a \`node --permission\` child per call, min–max ${speedRange(f.ratio)} over ${f.plan.rounds} rounds (medians ${ms(f.measures.ours.median)} ms vs ${ms(f.measures.node.median)} ms)`;
}

export function reportToolSearch(f: ToolSearchFigures): string[] {
  const p = f.plan;
  const L: string[] = [];
  L.push(`## 6. Tool Search (seed 004) on a ${f.catalogSize}-tool catalog`, "");
  L.push(
    `The bench worker is also a gateway whose only plugin is \`largeCatalogPlugin(${f.catalogSize})\` (test/support/large-catalog.ts: generated`,
    "tools with natural descriptions and small schemas, plus `github_issue_create`), served like the others (`wrangler deploy --dry-run` of",
    "bench/wrangler.bench.toml, Miniflare/workerd on 127.0.0.1), with one agent per surface in its `CODEMODE_CONFIG` (bench/harness/measure-toolsearch.ts).",
    "",
    "### 6.1 Model-visible payload",
    "",
    "One turn per surface over the same catalog: the turn answer's `tools` (what the model is sent) serialized as JSON, in UTF-8 bytes.",
    "Deterministic (same catalog, same config, no clock), so one turn each; where the turn reports `telemetry.surface.bytes` it was",
    "checked to equal this figure.",
    "",
  );
  const d = f.payload.direct.bytes;
  L.push(
    ...table(
      ["surface", "tools sent", "bytes", "KiB", "vs direct"],
      (["direct", "code", "tools", "codeMode"] as const).map((s) => {
        const x = f.payload[s];
        return [
          SURFACE_LABEL[s] + (x.names.length > 0 ? `: ${x.names.map((n) => `\`${n}\``).join(", ")}` : ""),
          String(x.tools),
          String(x.bytes),
          kib(x.bytes),
          s === "direct" ? "1× (baseline)" : `${ratio(d, x.bytes)} smaller (${((100 * x.bytes) / d).toFixed(2)}%)`,
        ];
      }),
    ),
    "",
    `**${payloadVerdict(f)}.** The schemas the model needs are loaded during the turn (\`describe\`), not sent up front. Code mode's`,
    "payload includes its quick index of the catalog (a bounded list of callable names in `exec`'s description), so it is larger than",
    "Tool Search's, but bounded too (section 5.3).",
    "",
    "### 6.2 One `tool_search_code` call against seed 004's Node child",
    "",
    "The same JavaScript body on both sides, seed 004's example (search → describe → call of `github_issue_create`), every result checked",
    "(`title` and an integer `number`):",
    "",
    "```js",
    ...p.code.split("\n"),
    "```",
    "",
    "- **ours**: `POST /v1/sessions/<sid>/turns/<turnId>/tools/tool_search_code` on a Tool Search turn (HTTP → Worker → session Durable",
    "  Object → QuickJS cell with the `openclaw.tools` bridge; search over SearchIndex, the call through the executor), sequential, keep-alive.",
    "- **baseline, seed 004's design**: per call, spawn `node --permission -e <runtime + body>` (Node's permission model, no fs, net,",
    "  child-process or worker grants; empty environment), whose `openclaw.tools.search / describe / call` (and `console.*`) travel as",
    "  newline-delimited JSON over stdin/stdout to the bench process. The parent answers them from an in-process copy of the same",
    `  ${f.catalogSize}-tool catalog with the repo's own code (ToolSearchCatalog over SearchIndex, the same limits, executeTool's validation →`,
    "  execute → output check; bench/toolsearch-host.ts, bundled for Node with esbuild once, outside the timing) and SIGKILLs the child",
    `  at a wall-clock timeout (${p.codeTimeoutMs} ms, our \`codeTimeoutMs\` too). A sample is spawn → the body's result back in the parent; the`,
    "  child's exit is awaited after the clock stops. The strongest alternative a user could pick for the seed's design: it skips",
    "  HTTP, a Worker and a Durable Object, and its bridge is a pipe in the same machine.",
    "",
    `${p.rounds} interleaved rounds (${p.oursPerRound} of ours, ${p.nodePerRound} Node children per round, the order reversing every round) after a warm-up of`,
    `${p.warmup} (${p.nodeWarmup} for the child). The ratio is per round (median over median in the same round), summarized across rounds.`,
    "",
  );
  const row = (name: string, includes: string, k: "ours" | "node") => {
    const s = f.measures[k];
    return [name, includes, String(s.n), ...timingCells(s), k === "node" ? "1× (baseline)" : `${speed(f.ratio)}; min–max ${speedRange(f.ratio)}`];
  };
  L.push(
    ...table(
      ["measure", "includes", "n", ...TIMING_HEADER, "vs a node --permission child per call (per-round ratio)"],
      [
        row("`tool_search_code` (our path)", "HTTP + Worker + session Durable Object + QuickJS cell + 3 bridge operations + JSON", "ours"),
        row("**baseline**: `node --permission` child per call", "spawn + Node start + body + 3 stdio round trips to the parent", "node"),
      ],
    ),
    "",
  );
  L.push(`**Latency: ${latencyVerdict(f)}.**`, "");
  if (f.cellMs) {
    L.push(
      `Inside the session object alone (its \`cell\` log record, \`durationMs\` in whole milliseconds, ${f.cellRecords} of the timed calls):`,
      `median ${ms(f.cellMs.median)} ms (IQR ${ms(f.cellMs.q1)}–${ms(f.cellMs.q3)}, max ${ms(f.cellMs.max)}); the rest of our time is HTTP, the Worker and the`,
      `Durable Object hop from this process. Per-round medians: ours ${msSpread(summarize(f.roundMedians.ours))}, node child ${msSpread(summarize(f.roundMedians.node))}.`,
      "",
    );
  }
  return L;
}
