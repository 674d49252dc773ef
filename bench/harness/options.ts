/**
 * Command line of `npm run bench` and the plan it implies: which sections run, how many rounds
 * and samples each takes, and where the report goes. Pure (argv in, plain data out).
 *
 *   npm run bench                       full run; prints the report and writes bench/out/BENCHMARKS.md
 *   npm run bench -- --write            full run, and rewrites BENCHMARKS.md at the repo root
 *   npm run bench -- --quick            few samples, a smoke run of every section (figures not representative)
 *   npm run bench -- --only=exec,vm     only these sections (exec, vm, bundle, suspend, catalog, toolsearch, mcp, chat, capacity, startup, swarm)
 */
import type { ChatWire } from "./chat-task.ts";

export const SECTIONS = ["exec", "vm", "bundle", "suspend", "catalog", "toolsearch", "mcp", "chat", "capacity", "startup", "swarm"] as const;
export type Section = (typeof SECTIONS)[number];

export interface Options {
  quick: boolean;
  /** Rewrite BENCHMARKS.md (only for a full run of every section). */
  write: boolean;
  sections: ReadonlySet<Section>;
}

export class UsageError extends Error {}

export const USAGE =
  "usage: npm run bench [-- [--quick] [--write] [--only=exec,vm,bundle,suspend,catalog,toolsearch,mcp,chat,capacity,startup,swarm]]";

export function parseOptions(argv: readonly string[]): Options {
  let quick = false;
  let write = false;
  let sections: Set<Section> = new Set(SECTIONS);
  for (const arg of argv) {
    if (arg === "--quick") quick = true;
    else if (arg === "--write") write = true;
    else if (arg === "--no-write")
      write = false; // the old opt-out, now the default
    else if (arg.startsWith("--only=")) {
      const names = arg.slice("--only=".length).split(",").filter(Boolean);
      const unknown = names.filter((n) => !(SECTIONS as readonly string[]).includes(n));
      if (names.length === 0 || unknown.length > 0) throw new UsageError(`--only: unknown section ${unknown.join(", ") || "(none given)"}; ${USAGE}`);
      sections = new Set(names as Section[]);
    } else throw new UsageError(`unknown option ${arg}; ${USAGE}`);
  }
  if (write && (quick || sections.size < SECTIONS.length)) {
    throw new UsageError("--write rewrites BENCHMARKS.md and needs a full run: drop --quick and --only");
  }
  return { quick, write, sections };
}

/** Iteration counts. Round counts are odd so a median over rounds is one round's figure. */
export interface Plan {
  token: string;
  tenant: string;
  /** 1. exec: rounds, and per round the samples of each measure. */
  exec: {
    code: string;
    expected: number;
    rounds: number;
    execPerRound: number;
    /** Samples per block: a round's measures take turns in blocks of this size. */
    block: number;
    floorPerRound: number;
    /** Paced exec and refused wait: samples per round, and the pause before each (ms). */
    pacedPerRound: number;
    pauseMs: number;
    nodePerRound: number;
    vmPerRound: number;
    warmup: number;
    nodeWarmup: number;
  };
  /** 2. VM in workerd: rounds over the three routes, iterations per route and round. */
  vm: { rounds: number; perRound: number; batch: number; warmup: number };
  /** 4. suspension over HTTP (rounds of cycles), 64-cell throughput, in-isolate batches, sizes. */
  suspend: {
    parkCode: string;
    noParkCode: string;
    rounds: number;
    perRound: number;
    warmup: number;
    throughputCells: number;
    throughputReps: number;
    iterations: number;
    batch: number;
    warmupIterations: number;
    sizeReps: number;
  };
  /** 5. catalog: latency over a replicated catalog, split into blocks of consecutive queries. */
  catalog: { latencyTools: number; reps: number; builds: number; blocks: number; surfaceSizes: number[] };
  /**
   * 6. Tool Search over the bench worker's 500-tool catalog: one `tool_search_code` body, our path
   * against a `node --permission` child per call, interleaved rounds of each.
   */
  toolsearch: {
    catalogSize: number;
    code: string;
    expectedTitle: string;
    codeTimeoutMs: number;
    rounds: number;
    oursPerRound: number;
    nodePerRound: number;
    warmup: number;
    nodeWarmup: number;
  };
  /**
   * 7. MCP: one `MCP.everything.echo({ message })` in an exec cell against the same call from the
   * Worker with the repo's McpClient, and a cell without MCP; interleaved rounds of each.
   */
  mcp: { message: string; rounds: number; perRound: number; warmup: number };
  /**
   * 8. /chat: the scripted task of chat-task.ts over the 300-tool MCP server, code mode and direct,
   * against a plain Worker replaying the same bodies; timed on one wire format (bytes on both).
   */
  chat: { wire: ChatWire; rounds: number; perRound: number; warmup: number };
  /** 9a. capacity: `cells` sessions each with a cell idle `timerMs` on a timer, at once, against one alone. */
  capacity: { cells: number; timerMs: number; rounds: number; warmup: number };
  /** 9b. cold start: rounds, each a fresh workerd (startup CPU, first JS and TS cells). */
  startup: { rounds: number };
  /**
   * 9c. Swarm: a `children`-way `agents.run` fan-out in one `/chat` against `children` child-like
   * `/chat` turns one after another; every model request held `latencyMs` at the fake provider.
   */
  swarm: { children: number; latencyMs: number; rounds: number; warmup: number };
  timeouts: { requestMs: number; workerRouteMs: number; childMs: number; readyMs: number; dryRunMs: number; watchdogMs: number };
}

export function planFor(quick: boolean): Plan {
  return {
    token: "bench-token-123",
    tenant: "bench",
    exec: {
      code: "return 1 + 2",
      expected: 3,
      // Enough samples per round that a round's median and p90 are steady under load: the spread across
      // rounds then shows the load's effect on the ratio, not the sampling noise of small blocks. The slow
      // tenth of requests, exec and refused `wait` alike, are the ones a garbage collection or a storage
      // hiccup lands in, and those come every few dozen requests: a round's p90 has to see many of them on
      // both sides. With 30 a side, three samples made the p90 and it turned on whether a third collection
      // fell in the round (per-round p90 ratios spread 1.15–1.56 where 100 a side spread 1.33–1.47, one
      // build, bench/experiments/exec-dist.ts). With 90 a side amid the other measures, one run's per-round
      // p90 ratios still spread 0.83–1.83 (IQR 1.12–1.41) around a pooled 1.27: 180 a side. The other
      // measures do not scale with exec: past their last block, exec and `wait` take turns alone.
      rounds: quick ? 3 : 15,
      execPerRound: quick ? 8 : 180,
      // Within a round the measures take turns in blocks of at most this many samples (each back to back).
      block: 5,
      floorPerRound: quick ? 5 : 30,
      // The paced pair is judged on its p90 as well: with 60 a side, a round's p90 was its sixth slowest
      // sample, and the per-round p90 ratios of one run spread 0.92–1.72 around a pooled 1.28.
      pacedPerRound: quick ? 5 : 120,
      pauseMs: 10,
      nodePerRound: quick ? 2 : 45,
      vmPerRound: quick ? 10 : 90,
      warmup: quick ? 5 : 20,
      nodeWarmup: quick ? 1 : 3,
    },
    vm: { rounds: quick ? 3 : 9, perRound: quick ? 20 : 60, batch: 10, warmup: 20 },
    suspend: {
      parkCode: "let n = 1; await yield_control(); return n + 1",
      noParkCode: "return 2",
      rounds: quick ? 3 : 11,
      perRound: quick ? 4 : 10,
      warmup: quick ? 3 : 10,
      throughputCells: 64, // MAX_SUSPENDED_RUNS (src/limits.ts)
      throughputReps: quick ? 1 : 3,
      iterations: quick ? 30 : 110,
      batch: 10,
      warmupIterations: 10,
      sizeReps: quick ? 2 : 5,
    },
    catalog: { latencyTools: 10_000, reps: quick ? 2 : 5, builds: quick ? 1 : 3, blocks: quick ? 3 : 9, surfaceSizes: [10, 100, 1000, 10_000] },
    toolsearch: {
      catalogSize: 500, // largeCatalogPlugin(500) in bench/bench-worker.ts
      // Seed 004's example body: search → describe → call.
      code: [
        'const hits = await openclaw.tools.search("create a GitHub issue");',
        "const tool = await openclaw.tools.describe(hits[0].id);",
        'return await openclaw.tools.call(tool.id, { title: "Crash on startup", body: "Steps to reproduce..." });',
      ].join("\n"),
      expectedTitle: "Crash on startup",
      codeTimeoutMs: 10_000, // seed 004's default, on both sides
      rounds: quick ? 3 : 11,
      oursPerRound: quick ? 5 : 20,
      nodePerRound: quick ? 2 : 10,
      warmup: quick ? 3 : 10,
      nodeWarmup: quick ? 1 : 3,
    },
    mcp: { message: "bench echo", rounds: quick ? 3 : 11, perRound: quick ? 5 : 20, warmup: quick ? 3 : 10 },
    chat: { wire: "openai", rounds: quick ? 3 : 11, perRound: quick ? 2 : 10, warmup: quick ? 2 : 5 },
    capacity: { cells: 16, timerMs: 1000, rounds: quick ? 3 : 7, warmup: 1 },
    startup: { rounds: quick ? 3 : 9 },
    swarm: { children: 16, latencyMs: 200, rounds: quick ? 3 : 7, warmup: 1 },
    timeouts: { requestMs: 15_000, workerRouteMs: 90_000, childMs: 15_000, readyMs: 60_000, dryRunMs: 90_000, watchdogMs: 600_000 },
  };
}
