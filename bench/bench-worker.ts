/**
 * Bench-only worker: times QuickJS-WASI VM create / eval / dispose, park/resume and catalog
 * search inside workerd. Not part of the production worker. Built by bench/harness/workers.ts with
 * `wrangler deploy --dry-run -c bench/wrangler.bench.toml` and served by bench/serve.mjs.
 *
 * The harness (bench/harness/measure-vm.ts) calls /raw, /raw-limits and /guest in interleaved
 * rounds and pools the per-batch `rows` each returns.
 *
 * Caveat: local workerd lets `performance.now()` advance during synchronous code; production
 * Workers freeze it between I/O, so these in-isolate timings can only be taken locally.
 *
 *   GET /clock               timer resolution probe
 *   GET /raw?n=200&batch=10&warmup=20         QuickJS.create({wasm}) / evalCode("1+2") / dispose
 *   GET /raw-limits?n=200&batch=10&warmup=20  QuickJS.create with GuestVm's options / dispose
 *   GET /guest?n=200&batch=10&warmup=20       GuestVm.create (+ host callbacks + prelude) / run "return 1 + 2" / dispose
 *   GET /reuse?n=200&batch=10&warmup=20       a cell in a pool VM, then that VM reset to the pristine image in place
 *                                             (GuestVm.reuse, what VmPool does between cells), timed apart
 *   GET /suspend?n=100&batch=10&warmup=10     park (snapshot, encodeSnapshot) / resume (decodeSnapshot, restore, deliver) of a small cell,
 *                                             and the old full-gzip format on the same cells (baseline); one-time pristine image cost
 *   GET /snapshot-sizes?reps=5                memory / changed pages / stored bytes (both formats) and park / resume times of a small and two 1 MB cells
 *   GET /search-quality                       recall@1/@8 and MRR of SearchIndex, plain BM25 and a substring scan on bench/fixtures (development and fresh held-out sets)
 *   GET /search-latency?size=10000&reps=10&builds=3   per-query latency over a replicated catalog
 *   GET /surface?sizes=10,100,1000            model-visible surface bytes, code mode vs direct
 *
 * It is also a gateway (section 6, bench/harness/measure-toolsearch.ts): `/healthz` and `/v1/*`
 * go to createGateway with the 500-tool catalog of test/support/large-catalog.ts, its session
 * Durable Object exported below, configured by the harness's CODEMODE_CONFIG and GATEWAY_TOKENS.
 *
 * Section 7 (bench/harness/measure-mcp.ts) uses that gateway with MCP servers attached per turn,
 * and times against it:
 *   GET /mcp-echo?url=http://127.0.0.1:<port>/mcp&message=m   the repo's McpClient in this Worker:
 *                                             connect (initialize) → tools/call echo → close, once;
 *                                             what one MCP call costs a plain Worker, which cannot
 *                                             keep a session across requests (the session object does)
 *
 * Section 8 (bench/harness/measure-chat.ts) runs `/chat` on that gateway against the fake provider
 * server, and times against it a plain Worker calling the provider with the same bodies:
 *   POST /provider-floor/prepare, POST /provider-floor/run?id=…[&store=1]   (bench-provider-floor.ts)
 */
import { QuickJS } from "quickjs-wasi";
import quickjsModule from "quickjs-wasi/quickjs.wasm";
import { GuestVm, type GuestHost } from "../src/runtime";
import { InterruptGuard } from "../src/runtime";
import { systemClock } from "../src/runtime";
import { CODE_MODE_DEFAULTS } from "../src/config";
import { snapshotSizes, suspendTimings } from "./bench-suspend";
import { searchLatency, searchQuality, surfaceSizes } from "./bench-catalog";
import { createGateway } from "../src/gateway";
import type { GatewayEnv } from "../src/http";
import { largeCatalogPlugin } from "../test/support/large-catalog";
import { McpClient, MCP_CALL_TIMEOUT_MS } from "../src/mcp";
import { prepareFloor, runFloor, type FloorEnv } from "./bench-provider-floor";
export { DurableFloor } from "./bench-provider-floor";

/** Section 6: the same 500-tool catalog under every surface (direct, Tool Search code/tools, code mode). */
const TOOL_SEARCH_CATALOG_SIZE = 500;
const gateway = createGateway({ plugins: [largeCatalogPlugin(TOOL_SEARCH_CATALOG_SIZE)] });
export class SessionDurableObject extends gateway.SessionDurableObject {}
export class PristineImageRegistry extends gateway.PristineImageRegistry {}

const MAX_N = 2000;
const MAX_WARMUP = 200;
const MAX_BATCH = 50;

type Phase = Record<string, number>;

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, median: q(0.5), p90: q(0.9), min: s[0]!, max: s[s.length - 1]!, mean };
}

function summarize(rows: Phase[]) {
  const keys = Object.keys(rows[0] ?? {});
  const out: Record<string, ReturnType<typeof stats>> = {};
  for (const k of keys) out[k] = stats(rows.map((r) => r[k]!));
  return out;
}

function intParam(url: URL, name: string, dflt: number, max: number): number {
  const v = Number(url.searchParams.get(name) ?? dflt);
  return Number.isInteger(v) && v >= 0 ? Math.min(v, max) : dflt;
}

/**
 * workerd's performance.now() has a 1 ms resolution (see /clock), coarser than one VM.
 * So each sample is a batch of K VMs timed phase by phase (K creates, then K evals, then K
 * disposes) and divided by K: a resolution of 1/K ms per operation. Each sample also times K
 * complete create+eval+dispose iterations one after the other (`sequentialTotal`, one VM alive
 * at a time, as a request runs). Medians and p90 are over batches. `dispose` only drops the
 * instance; the memory is reclaimed later by V8's GC, which lands inside whichever phase runs.
 */
type Batch = (k: number) => Promise<Phase>;

const rawBatch: Batch = async (k) => {
  const vms: QuickJS[] = [];
  const t0 = performance.now();
  for (let i = 0; i < k; i++) vms.push(await QuickJS.create({ wasm: quickjsModule }));
  const t1 = performance.now();
  for (const vm of vms) {
    const h = vm.evalCode("1+2");
    const value = h.toNumber();
    h.dispose();
    if (value !== 3) throw new Error(`raw eval returned ${value}`);
  }
  const t2 = performance.now();
  for (const vm of vms) vm.dispose();
  const t3 = performance.now();
  return { create: (t1 - t0) / k, eval: (t2 - t1) / k, dispose: (t3 - t2) / k, total: (t3 - t0) / k };
};

/** QuickJS.create with the options GuestVm uses, but no host callbacks and no prelude. */
const rawLimitsBatch: Batch = async (k) => {
  const opts = CODE_MODE_DEFAULTS;
  const vms: QuickJS[] = [];
  const t0 = performance.now();
  for (let i = 0; i < k; i++) {
    const guard = new InterruptGuard(systemClock, systemClock.now() + opts.timeoutMs, opts.timeoutMs);
    vms.push(
      await QuickJS.create({
        wasm: quickjsModule,
        memoryLimit: opts.memoryLimitBytes,
        maxStackSize: 256 * 1024,
        interruptHandler: guard.handler,
        timezoneOffset: 0,
      }),
    );
  }
  const t1 = performance.now();
  for (const vm of vms) vm.dispose();
  const t2 = performance.now();
  return { create: (t1 - t0) / k, dispose: (t2 - t1) / k, total: (t2 - t0) / k };
};

const noopHost: GuestHost = { request() {}, output() {}, cancel() {} };

/** The project's path, as cell-runner.ts drives it for `return 1 + 2` (default limits). */
const guestBatch: Batch = async (k) => {
  const opts = CODE_MODE_DEFAULTS;
  const vms: GuestVm[] = [];
  const t0 = performance.now();
  for (let i = 0; i < k; i++) {
    const guard = new InterruptGuard(systemClock, systemClock.now() + opts.timeoutMs, opts.timeoutMs);
    vms.push(await GuestVm.create({ memoryLimitBytes: opts.memoryLimitBytes }, guard, noopHost));
  }
  const t1 = performance.now();
  for (const vm of vms) {
    vm.installTools("[]");
    vm.start("return 1 + 2");
    const status = vm.status();
    const valueJson = vm.valueJson();
    if (status.state !== "completed" || valueJson !== "3") throw new Error(`guest run: ${JSON.stringify(status)} ${valueJson}`);
  }
  const t2 = performance.now();
  for (const vm of vms) vm.dispose();
  const t3 = performance.now();
  return { createWithPrelude: (t1 - t0) / k, run: (t2 - t1) / k, dispose: (t3 - t2) / k, total: (t3 - t0) / k };
};

/**
 * The pool's cycle (VmPool): a cell runs in a VM, is disposed, and its instance is reset to the
 * pristine image in place to serve the next cell. One VM reused K times; the cell and the reset are
 * timed apart, each summed over the batch.
 */
const reuseBatch: Batch = async (k) => {
  const opts = CODE_MODE_DEFAULTS;
  let instance: QuickJS | null = null;
  const retire = (vm: QuickJS) => {
    instance = vm;
  };
  let vm = (await GuestVm.prepare({ memoryLimitBytes: opts.memoryLimitBytes })).retireTo(retire);
  let run = 0;
  let reset = 0;
  for (let i = 0; i < k; i++) {
    const t0 = performance.now();
    vm.bind(new InterruptGuard(systemClock, systemClock.now() + opts.timeoutMs, opts.timeoutMs), noopHost);
    vm.installTools("[]");
    vm.start("return 1 + 2");
    const status = vm.status();
    const valueJson = vm.valueJson();
    vm.dispose();
    const t1 = performance.now();
    if (status.state !== "completed" || valueJson !== "3") throw new Error(`reused run: ${JSON.stringify(status)} ${valueJson}`);
    const given = instance as QuickJS | null;
    instance = null;
    const next = given ? GuestVm.reuse(given, { memoryLimitBytes: opts.memoryLimitBytes }) : null;
    reset += performance.now() - t1;
    run += t1 - t0;
    if (!next) throw new Error("the VM was not reset");
    vm = next.retireTo(retire);
  }
  vm.retireTo(null).dispose();
  return { run: run / k, reset: reset / k };
};

/** K complete iterations one after the other (one VM alive at a time), as a request would run. */
function sequential(batch: Batch): Batch {
  return async (k) => {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) await batch(1);
    return { sequentialTotal: (performance.now() - t0) / k };
  };
}

async function run(phased: Batch, n: number, k: number, warmup: number, alone = false) {
  // Each sample: one phase-by-phase batch and one sequential batch, interleaved (`alone`: the first only).
  const whole = sequential(phased);
  const batch: Batch = alone ? phased : async (k) => ({ ...(await phased(k)), ...(await whole(k)) });
  const batches = Math.max(1, Math.ceil(n / k));
  for (let i = 0; i < Math.ceil(warmup / k); i++) await batch(k);
  const rows: Phase[] = [];
  for (let i = 0; i < batches; i++) rows.push(await batch(k));
  // `rows`: every batch's phases, for the harness to pool and compare across interleaved calls.
  return { iterations: batches * k, batchSize: k, batches, phases: summarize(rows), rows };
}

/** Section 7's baseline: one MCP `echo` through the repo's client, connect and close included. Loopback only. */
async function mcpEcho(url: URL): Promise<Response> {
  const target = new URL(url.searchParams.get("url") ?? "");
  if (target.hostname !== "127.0.0.1") return Response.json({ error: "/mcp-echo: loopback URLs only" }, { status: 400 });
  const opts = { timeoutMs: MCP_CALL_TIMEOUT_MS };
  const connected = await McpClient.connect({ server: "everything", url: target, headers: {} }, opts);
  if (!connected.ok) return Response.json({ error: `connect: ${connected.message}` }, { status: 502 });
  try {
    const r = await connected.value.callTool("echo", { message: url.searchParams.get("message") ?? "" }, opts);
    return r.ok ? Response.json({ value: r.value }) : Response.json({ error: `echo: ${r.message}` }, { status: 502 });
  } finally {
    await connected.value.close();
  }
}

function clockProbe() {
  // Smallest non-zero step of performance.now() seen in a short busy loop.
  let minStep = Infinity;
  let steps = 0;
  let prev = performance.now();
  const end = prev + 20;
  for (let i = 0; i < 5_000_000; i++) {
    const t = performance.now();
    if (t !== prev) {
      minStep = Math.min(minStep, t - prev);
      steps++;
      prev = t;
      if (t >= end) break;
    }
  }
  return { minStepMs: Number.isFinite(minStep) ? minStep : null, steps, advances: steps > 0 };
}

export default {
  async fetch(req: Request, env: GatewayEnv & FloorEnv, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname === "/healthz" || url.pathname.startsWith("/v1/")) return gateway.worker.fetch(req, env, ctx);
    const n = intParam(url, "n", 200, MAX_N);
    const warmup = intParam(url, "warmup", 20, MAX_WARMUP);
    const k = Math.max(1, intParam(url, "batch", 10, MAX_BATCH));
    try {
      switch (url.pathname) {
        case "/clock":
          return Response.json(clockProbe());
        case "/mcp-echo":
          return await mcpEcho(url);
        case "/provider-floor/prepare":
          return await prepareFloor(req);
        case "/provider-floor/run":
          return await runFloor(req, url, env);
        case "/raw":
          return Response.json(await run(rawBatch, n, k, warmup));
        case "/raw-limits":
          return Response.json(await run(rawLimitsBatch, n, k, warmup));
        case "/reuse":
          return Response.json(await run(reuseBatch, n, k, warmup, true));
        case "/guest":
          return Response.json(await run(guestBatch, n, k, warmup));
        case "/suspend":
          return Response.json(await suspendTimings(n, k, warmup));
        case "/snapshot-sizes":
          return Response.json(await snapshotSizes(Math.max(1, intParam(url, "reps", 5, 50))));
        case "/search-quality":
          return Response.json(searchQuality());
        case "/search-latency":
          return Response.json(
            searchLatency(
              Math.max(1, intParam(url, "size", 10_000, 20_000)),
              Math.max(1, intParam(url, "reps", 10, 100)),
              Math.max(1, intParam(url, "builds", 3, 20)),
            ),
          );
        case "/surface": {
          const sizes = (url.searchParams.get("sizes") ?? "10,100,1000")
            .split(",")
            .map(Number)
            .filter((v) => Number.isInteger(v) && v > 0 && v <= 20_000)
            .slice(0, 8);
          return Response.json(surfaceSizes(sizes));
        }
        default:
          return Response.json({ error: "no such route" }, { status: 404 });
      }
    } catch (error) {
      return Response.json({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }, { status: 500 });
    }
  },
} satisfies ExportedHandler<GatewayEnv & FloorEnv>;
