/**
 * The goals table: each goal of the issues, the figure it is judged on with its spread, and a
 * verdict from that spread (verdict.ts). Only goals whose sections ran are listed. Pure.
 */
import type { Results } from "./report.ts";
import { factor, kib, ms, msSpread, speed, speedRange, table, x, xRange } from "./report-format.ts";
import { latencyVerdict, payloadVerdict } from "./report-toolsearch.ts";
import { bytesVerdict, overheadVerdict } from "./report-chat.ts";
import { invert } from "./stats.ts";
import { CAPACITY_LINE } from "./report-capacity.ts";
import { SWARM_LINE } from "./report-swarm.ts";
import { FIRST_TS_LINE_MS, STARTUP_LINE_MS } from "./report-startup.ts";
import { exactBasis, iqrBasis, judge, rangeBasis, statusText, type Basis, type Rule, type Status } from "./verdict.ts";

interface Goal {
  goal: string;
  measured: string;
  /** A goal's verdict, or a reference row's standing against the same line. */
  status: string;
}

const verdict = (basis: Basis, rule: Rule): string => `${statusText(judge(basis, rule))} (${basis.what})`;
/** A yes/no goal on deterministic figures. */
const holds = (ok: boolean): string => `${statusText(ok ? "met" : "not met")} (deterministic)`;
const reference = (status: Status) => (status === "met" ? "within" : status === "not met" ? "over" : "unclear (spread crosses the line)");

export function goalRows(r: Results): Goal[] {
  const rows: Goal[] = [];
  if (r.exec) {
    const e = r.exec;
    const vsNode = invert(e.ratios.node.exec);
    rows.push({
      goal: "`exec` of a trivial cell ≥ 10× faster than a Node process per cell",
      measured:
        `${speed(e.ratios.node.exec)}, min–max ${speedRange(e.ratios.node.exec)} over ${e.plan.rounds} rounds (medians ${ms(e.measures.exec.median)} ms vs ${ms(e.measures.node.median)} ms; client \`node:http\`, ` +
        `through \`fetch()\` ${speed(e.ratios.node.execFetch)}); for comparison, against a bare quickjs-wasi VM per cell in Node (${ms(e.measures.bareVm.median)} ms): ${speed(e.ratios.bareVm.exec)}`,
      status: verdict(iqrBasis(vsNode, "rounds"), { kind: "atLeast", line: 10 }),
    });
    // Judged twice: each request right after the previous answer, and after a pause as between a model's calls.
    const vsDo = (d: typeof e.vsDurableObject, exec: "exec" | "execPaced", wait: "wait" | "waitPaced", how: string): Goal => {
      const median = judge(iqrBasis(d.median, "rounds"), { kind: "atMost", line: 1.5 });
      const p90 = judge(iqrBasis(d.p90, "rounds"), { kind: "atMost", line: 1.5 });
      // Both must hold: the worse verdict of the two.
      const both = median === "not met" || p90 === "not met" ? "not met" : median === "met" && p90 === "met" ? "met" : "unclear";
      return {
        goal: `\`exec\` of a trivial cell ≤ 1.5× a Durable Object round trip (a refused \`wait\`: HTTP → Worker → Durable Object, no VM), median and p90 (issue 22), ${how}`,
        measured:
          `medians ${x(d.median.median)} (IQR ${xRange(d.median.q1, d.median.q3)}), p90s ${x(d.p90.median)} (IQR ${xRange(d.p90.q1, d.p90.q3)}) per round (medians ${ms(e.measures[exec].median)} ms vs ${ms(e.measures[wait].median)} ms; ` +
          `p90 ${ms(e.measures[exec].p90)} ms vs ${ms(e.measures[wait].p90)} ms)`,
        status: `${statusText(both)} (IQR over ${e.plan.rounds} rounds, medians and p90s)`,
      };
    };
    rows.push(
      vsDo(
        e.vsDurableObject,
        "exec",
        "wait",
        "back to back (each request as soon as the previous answer is in: it also pays for the previous cell's deferred work)",
      ),
      vsDo(e.vsDurableObjectPaced, "execPaced", "waitPaced", `paced (a ${e.plan.pauseMs} ms pause before each request, as between a model's calls)`),
    );
  }
  if (r.vm) {
    const v = r.vm;
    rows.push({
      goal: "QuickJS create + eval + dispose ≤ 2 ms inside workerd (median)",
      measured: `${msSpread(v.rawTotalRounds)}, per-round medians`,
      status: verdict(iqrBasis(v.rawTotalRounds, "rounds"), { kind: "atMost", line: 2 }),
    });
    rows.push({
      goal: "(for reference) the project's path, GuestVm.create + prelude + run + dispose, against the same 2 ms",
      measured: `${msSpread(v.guestTotalRounds)}, per-round medians`,
      status: reference(judge(iqrBasis(v.guestTotalRounds, "rounds"), { kind: "atMost", line: 2 })),
    });
  }
  if (r.suspendHttp && r.suspendIsolate) {
    const h = r.suspendHttp;
    const w = r.suspendIsolate;
    rows.push({
      goal: "`wait` of a small parked cell (restore + deliver + complete) ≤ 5 ms inside workerd (median; 4.1)",
      measured:
        `${msSpread(h.waitInObject)} in the session object (HTTP \`wait\` − refused-\`wait\` floor, per round; medians ${ms(h.measures.wait.median)} − ${ms(h.measures.refused.median)} ms); ` +
        `in-isolate resume ${msSpread(w.phases.resumeSequential!)} over batches (production codec; old full-gzip format ${ms(w.phases.fullResumeSequential!.median)} ms)`,
      status: verdict(iqrBasis(h.waitInObject, "rounds"), { kind: "atMost", line: 5 }),
    });
    const b = w.suspend.bytes;
    rows.push({
      goal: "stored bytes of a small parked cell ≤ 256 KiB (4.2)",
      measured:
        `${kib(b.stored.median)} KiB (production codec: ${b.changedPages.median} of ${b.pages.median} 4 KiB pages differ from the pristine image, XOR + gzip, ` +
        `of a ${kib(b.memory.median)} KiB VM memory); baseline old full-gzip format ${kib(b.fullStored.median)} KiB, ${x(b.fullStored.median / b.stored.median)} smaller`,
      status: verdict(rangeBasis(b.stored, `min–max over ${b.stored.n} batches`), { kind: "atMost", line: 256 * 1024 }),
    });
  }
  if (r.catalog) {
    const c = r.catalog;
    const f = c.quality.sets.find((s) => s.heldOut);
    if (f) {
      rows.push({
        goal: `search recall@8 ≥ 0.95 on the held-out set (${f.queriesFile}: ${f.index.queries} queries, ${f.tools} tools, written after the method was frozen; 5.1)`,
        measured: `${f.index.recallAt8.toFixed(3)} (plain BM25 ${f.bm25.recallAt8.toFixed(3)}, substring ${f.substring.recallAt8.toFixed(3)})`,
        status: verdict(exactBasis(f.index.recallAt8), { kind: "atLeast", line: 0.95 }),
      });
      rows.push({
        goal: "search recall@1 ≥ 0.70 on the held-out set (5.1)",
        measured: `${f.index.recallAt1.toFixed(3)} (plain BM25 ${f.bm25.recallAt1.toFixed(3)}, substring ${f.substring.recallAt1.toFixed(3)})`,
        status: verdict(exactBasis(f.index.recallAt1), { kind: "atLeast", line: 0.7 }),
      });
    }
    const notBelow = c.quality.sets.every((s) => (["recallAt1", "recallAt8", "mrrAt8"] as const).every((k) => s.index[k] >= s.bm25[k]));
    rows.push({
      goal: "SearchIndex never below plain BM25 + stemming (recall@1, recall@8, MRR@8) on any set (5.1)",
      measured: notBelow ? "never below" : "below on some set",
      status: holds(notBelow),
    });
    const lat = c.latency;
    rows.push({
      goal: `\`catalog.search\` ≤ 2 ms per query over ${lat.tools.toLocaleString("en-US")} tools, median inside workerd (5.2)`,
      measured:
        `${ms(lat.index.perQuery.median)} ms; per block of consecutive queries ${msSpread(c.blockMedians.index)} ` +
        `(substring baseline ${ms(lat.substring.perQuery.median)} ms, plain BM25 ${ms(lat.bm25.perQuery.median)} ms)`,
      status: verdict(iqrBasis(c.blockMedians.index, "blocks of queries"), { kind: "atMost", line: 2 }),
    });
    const bounded = c.surface.filter((s) => s.tools >= 100);
    const flat = bounded.length > 0 && Math.max(...bounded.map((s) => s.codeModeBytes)) <= 1.05 * Math.min(...bounded.map((s) => s.codeModeBytes));
    const s1000 = c.surface.find((s) => s.tools === 1000);
    const share = s1000 ? s1000.codeModeBytes / s1000.directBytes : NaN;
    rows.push({
      goal: "code-mode surface flat (bounded) and ≤ 2% of direct exposure at 1,000 tools (5.3)",
      measured: `${flat ? "flat" : "not flat"}; ${s1000 ? `${kib(s1000.codeModeBytes)} KiB vs ${kib(s1000.directBytes)} KiB = ${(100 * share).toFixed(2)}%` : "n/a"}`,
      status: holds(flat && share <= 0.02),
    });
  }
  if (r.toolsearch) {
    const t = r.toolsearch;
    const p = t.payload;
    rows.push({
      goal: `Tool Search payload smaller than direct tools on the same ${t.catalogSize}-tool catalog (seed 004; 6.1)`,
      measured: `${payloadVerdict(t)}: ${p.code.bytes} B vs ${p.direct.bytes} B (code mode ${p.codeMode.bytes} B)`,
      status: holds(p.code.bytes < p.direct.bytes && p.tools.bytes < p.direct.bytes),
    });
    rows.push({
      goal: "(for reference) one `tool_search_code` call vs seed 004's Node child per call (6.2)",
      measured: latencyVerdict(t),
      status: `${{ met: "ours faster", "not met": "ours slower", unclear: "unclear (spread crosses 1×)" }[judge(iqrBasis(t.ratio, "rounds"), { kind: "atMost", line: 1 })]} (IQR over ${t.ratio.n} rounds)`,
    });
  }
  if (r.mcp) {
    const m = r.mcp;
    rows.push({
      goal: "`MCP.<server>.<tool>()` from a cell ≤ 1.2× the same call from the Worker (issue 22; 7.2)",
      measured: `${factor(m.ratio)} per round (medians ${ms(m.measures.cell.median)} ms vs ${ms(m.measures.direct.median)} ms)`,
      status: verdict(iqrBasis(m.ratio, "rounds"), { kind: "atMost", line: 1.2 }),
    });
  }
  if (r.chat) {
    const c = r.chat;
    const bytesOf = (wire: string, surface: string) => c.bytes.find((b) => b.wire === wire && b.surface === surface)?.promptBytes ?? NaN;
    const fewer = c.bytes.every((b) => bytesOf(b.wire, "codeMode") < bytesOf(b.wire, "direct"));
    rows.push({
      goal: "(for reference) `/chat`, one scripted task over a 300-tool MCP catalog: prompt bytes and model round trips, code mode vs direct exposure (issue 11; 8.1)",
      measured: bytesVerdict(c),
      status: `${fewer ? "code mode fewer" : "code mode not fewer"} (deterministic)`,
    });
    rows.push({
      goal: "(for reference) gateway overhead per assistant turn, excluding provider time (issue 11; 8.2)",
      measured: overheadVerdict(c),
      status: "reported (the issue sets no line)",
    });
    const m = c.marginal;
    rows.push({
      goal: "`/chat` per model round trip ≤ 2 ms of gateway time over a plain Worker, code mode (issue 22; 8.2)",
      measured:
        `${msSpread(m.over)} over the plain Worker's marginal call (the marginal round trip: the same task with ${m.extra} more \`exec\` round trips, ` +
        `gateway time less provider, MCP server and the cells' own time, the difference ÷ ${m.extra}: ${msSpread(m.perRoundTrip)}; the plain Worker's ` +
        `the same way, its replay of the long task's bodies less its replay of the task's, ÷ ${m.extra}: ${msSpread(m.floorPerCall)}; differences per round). ` +
        `Of it, the commit each round trip waits for: a Durable Object that stores each answer before its next call pays ${msSpread(m.durableOverFloor)} over the plain Worker; ` +
        `the gateway is ${msSpread(m.overDurable)} over that durable floor`,
      status: verdict(iqrBasis(m.over, "rounds"), { kind: "atMost", line: 2 }),
    });
    const trip = c.vsFloor.codeMode.roundTripOver;
    rows.push({
      goal: "(for reference) the model calls' windows in the isolate less the provider, ÷ round trips, over the plain Worker (the figure the line was judged on before: the isolate's clock moves only on I/O, so the first window also holds the turn's opening and a later one the previous cell's bookkeeping)",
      measured: `code mode ${msSpread(trip)}; direct exposure ${msSpread(c.vsFloor.direct.roundTripOver)}`,
      status: reference(judge(iqrBasis(trip, "rounds"), { kind: "atMost", line: 2 })),
    });
    rows.push({
      goal: "opening a `/chat` turn ≤ 5 ms plus the MCP servers it lists (issue 22; 8.2)",
      measured: `${msSpread(c.open.own.rounds)} (wall ${msSpread(c.open.wall.rounds)} less the MCP server's ${msSpread(c.open.mcp.rounds)}; per-round medians; includes the HTTP edge and the session object's round trip)`,
      status: verdict(iqrBasis(c.open.own.rounds, "rounds"), { kind: "atMost", line: 5 }),
    });
  }
  rows.push(...edgeRows(r));
  return rows;
}

/** Issue 22's capacity, size and cold-start goals. */
function edgeRows(r: Results): Goal[] {
  const rows: Goal[] = [];
  if (r.capacity) {
    const c = r.capacity;
    rows.push({
      goal: `${c.plan.cells} cells of ${c.plan.cells} sessions idle on a ${c.plan.timerMs} ms timer in one isolate at once take ≤ ${CAPACITY_LINE}× one such cell alone (issue 22)`,
      measured: `${factor(c.ratio)} (medians ${ms(c.measures.together.median)} ms together vs ${ms(c.measures.alone.median)} ms alone; one after another would be ${c.plan.cells}×)`,
      status: verdict(iqrBasis(c.ratio, "rounds"), { kind: "atMost", line: CAPACITY_LINE }),
    });
  }
  if (r.swarm) {
    const s = r.swarm;
    const n = s.plan.children;
    rows.push({
      goal: `a ${n}-way \`agents.run\` fan-out (the cell) takes ≈ one sub-agent's time: ≤ ${SWARM_LINE}× one of ${n} child turns run one after another in the same rounds (issue 27)`,
      measured:
        `${factor(s.ratios.cellVsChild)} (medians ${ms(s.measures.cell.median)} ms the cell vs ${ms(s.measures.sequential.median)} ms for the ${n} turns in sequence, ` +
        `${ms(s.measures.oneChild.median)} ms each; provider latency ${s.plan.latencyMs} ms; in sequence would be ${n}×)`,
      status: verdict(iqrBasis(s.ratios.cellVsChild, "rounds"), { kind: "atMost", line: SWARM_LINE }),
    });
  }
  if (r.bundle) {
    const b = r.bundle.withTs;
    const main = b.files["entry.js"] ?? NaN;
    rows.push({
      goal: "main module ≤ 1 MiB gzip (issue 22; the TypeScript compiler a module of its own)",
      measured: `${kib(b.mainGzipBytes)} KiB gzip (${kib(main)} KiB uncompressed)`,
      status: holds(b.mainGzipBytes <= 1024 * 1024),
    });
    rows.push({
      goal: "(for reference) total upload, gzip, against the 2 MiB budget of scripts/check-bundle-size.mjs (Workers Free allows 3 MiB)",
      measured: `${b.gzipKiB.toFixed(1)} KiB gzip (${b.uploadKiB.toFixed(1)} KiB uncompressed)`,
      status: b.gzipKiB <= 2048 ? "within" : "over",
    });
  }
  if (r.startup) {
    const s = r.startup;
    rows.push({
      goal: `startup (main module evaluation in a fresh isolate) ≤ ${STARTUP_LINE_MS} ms of CPU (issue 22)`,
      measured: `${msSpread(s.startup.main)} CPU over ${s.plan.rounds} fresh workerds (a one-line module: ${ms(s.startup.floor.median)} ms)`,
      status: verdict(iqrBasis(s.startup.main, "rounds"), { kind: "atMost", line: STARTUP_LINE_MS }),
    });
    rows.push({
      goal: `first TypeScript cell of a fresh isolate ≤ ${FIRST_TS_LINE_MS} ms of CPU over the first JavaScript cell (issue 22)`,
      measured: `${msSpread(s.firstCell.extra)} (medians ${ms(s.firstCell.typescript.median)} ms TypeScript vs ${ms(s.firstCell.javascript.median)} ms JavaScript)`,
      status: verdict(iqrBasis(s.firstCell.extra, "rounds"), { kind: "atMost", line: FIRST_TS_LINE_MS }),
    });
  }
  return rows;
}

export function reportGoals(r: Results): string[] {
  const rows = goalRows(r);
  if (rows.length === 0) return [];
  return [
    "## Goals",
    "",
    "A timing goal is judged on the spread of its figure across rounds, not on one median: **met** when the whole interquartile range",
    "(IQR) of the per-round figure is on the right side of the line, **not met** when it is wholly on the wrong side, **unclear** when",
    "it crosses the line. Deterministic figures (bytes, recall on fixed sets) are judged as they are. Goals stated in absolute times",
    "have no baseline in the run to cancel the machine's load: read them with the load in the header.",
    "",
    ...table(
      ["goal", "measured", "status"],
      rows.map((g) => [g.goal, g.measured, g.status]),
    ),
    "",
  ];
}
