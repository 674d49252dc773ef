/**
 * `npm run bench`: runs the sections asked for, in the order that builds and serves each worker
 * once, then renders the report and decides where it goes.
 *
 *   1. exec over HTTP (production build) against a Node process per cell and a bare quickjs-wasi
 *      VM per cell in Node                                     measure-exec.ts,    report-exec.ts
 *   2. QuickJS-WASI VM costs inside workerd (bench worker)     measure-vm.ts,      report-vm.ts
 *   3. bundle size with and without the TypeScript compiler    measure-bundle.ts,  report-bundle.ts
 *   4. suspension: HTTP wait/park, in-isolate codec, sizes     measure-suspend.ts, report-suspend.ts
 *   5. catalog: search quality, latency, model surface         measure-catalog.ts, report-catalog.ts
 *   6. Tool Search: payload per surface on 500 tools, and one
 *      tool_search_code call against a node --permission child  measure-toolsearch.ts, report-toolsearch.ts
 *   7. MCP: payload of a turn with two real MCP servers (code
 *      mode vs direct), and MCP.everything.echo in a cell vs
 *      the same call from the Worker                         measure-mcp.ts,     report-mcp.ts
 *   8. /chat: prompt bytes and round trips of one scripted task
 *      over the 300-tool MCP server (code mode vs direct), and
 *      the gateway's time per assistant turn against a plain
 *      Worker calling the same fake provider                 measure-chat.ts,    report-chat.ts
 *                                     (chat-task.ts, chat-calls.ts, chat-bytes.ts, fake-provider.ts)
 *   9a. capacity: 16 sessions' cells idle on a 1 s timer at
 *      once in one isolate, against one such cell alone      measure-capacity.ts, report-capacity.ts
 *   9b. cold start in a fresh workerd per round: CPU of the
 *      main module's evaluation (vs a one-line module) and of
 *      the first TypeScript cell (vs the first JS cell)      measure-startup.ts,  report-startup.ts
 *   9c. swarm: a 16-way agents.run fan-out in one /chat
 *      (production build, fake provider with 200 ms latency)
 *      against 16 child-like /chat turns one after another  measure-swarm.ts,   report-swarm.ts
 *
 * Supporting jobs: supervise.ts (children, cleanup, watchdog), workers.ts (build and serve),
 * http.ts (requests), baselines.ts (the two exec baselines), baselines-toolsearch.ts (section 6's), rounds.ts (interleaving), stats.ts
 * (quantiles, per-round ratios), verdict.ts (goal verdicts from spreads), machine.ts (header facts),
 * options.ts (command line and iteration counts), report*.ts (markdown).
 *
 * The report always goes to stdout and bench/out/BENCHMARKS.md (git-ignored), with the figures
 * as JSON in bench/out/results.json; BENCHMARKS.md at the root only with --write.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describeMachine, readLoad } from "./machine.ts";
import { measureBundle } from "./measure-bundle.ts";
import { measureCapacity } from "./measure-capacity.ts";
import { measureStartup } from "./measure-startup.ts";
import { measureSwarm } from "./measure-swarm.ts";
import { measureCatalog } from "./measure-catalog.ts";
import { measureExec } from "./measure-exec.ts";
import { measureSuspendHttp, measureSuspendIsolate } from "./measure-suspend.ts";
import { measureMcp, startMcpServers, startToolsServer, stopMcpServers } from "./measure-mcp.ts";
import { measureChat } from "./measure-chat.ts";
import { chatProviders, CHAT_KEY, CHAT_KEY_BINDING } from "./chat-task.ts";
import { startFakeProvider, type FakeProvider } from "./fake-provider.ts";
import { measureToolSearch, toolSearchConfig } from "./measure-toolsearch.ts";
import { measureVm } from "./measure-vm.ts";
import { workerRoute, type Gateway } from "./http.ts";
import { parseOptions, planFor, SECTIONS, UsageError, type Section } from "./options.ts";
import { renderReport, type Results } from "./report.ts";
import { goalRows } from "./report-goals.ts";
import { superviseRun } from "./supervise.ts";
import { readWranglerConfig, serveBundle, stopServer, dryRun, type Paths, type Server } from "./workers.ts";

const HARNESS_DIR = path.dirname(fileURLToPath(import.meta.url));
const BENCH_DIR = path.resolve(HARNESS_DIR, "..");
const ROOT = path.resolve(BENCH_DIR, "..");
const OUT_DIR = path.join(BENCH_DIR, "out");

/** A served gateway as the bench's HTTP client addresses it (bearer token of the bench tenant). */
function gatewayAt(base: string, token: string, timeoutMs: number): Gateway {
  return { base, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, timeoutMs };
}

async function run(argv: string[]): Promise<void> {
  const options = parseOptions(argv);
  const plan = planFor(options.quick);
  const has = (s: Section) => options.sections.has(s);
  const { tmpRoot } = superviseRun(plan.timeouts.watchdogMs);
  const loadStart = readLoad();
  const start = performance.now();
  const log = (msg: string) => console.log(`[bench ${((performance.now() - start) / 1000).toFixed(1).padStart(5)}s] ${msg}`);
  const paths: Paths = {
    root: ROOT,
    wranglerJs: path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"),
    serve: path.join(BENCH_DIR, "serve.mjs"),
    tmpRoot,
  };
  if (!fs.existsSync(paths.wranglerJs)) throw new Error(`wrangler not installed (${paths.wranglerJs}); run npm install`);
  log(`temp dir ${tmpRoot}${options.quick ? " (--quick)" : ""}; sections: ${[...options.sections].join(", ")}`);
  const t = plan.timeouts;
  const results: Results = {};

  // The production build first: its output is also what sections 1 and 4 serve.
  const rootConfig = path.join(ROOT, "wrangler.toml");
  if (has("exec") || has("suspend") || has("bundle") || has("capacity") || has("startup") || has("swarm")) {
    const bundle = await measureBundle(paths, rootConfig, path.join(BENCH_DIR, "stubs", "typescript-empty.mjs"), has("bundle"), t.dryRunMs, log);
    if (has("bundle")) results.bundle = bundle;
    if (has("startup")) {
      const startup = { ...plan.startup, token: plan.token, tenant: plan.tenant, timeoutMs: t.workerRouteMs };
      results.startup = await measureStartup(ROOT, bundle.withTs, await readWranglerConfig(rootConfig), startup, log);
    }
    if (has("exec") || has("suspend") || has("capacity") || has("swarm")) {
      // Section 9c's model provider: the fake provider server in this process, every model request held latencyMs.
      const swarmProvider = has("swarm") ? await startFakeProvider(ROOT, plan.swarm.latencyMs) : null;
      log(`serving the production bundle${swarmProvider ? ` (providers at the fake provider server, ${swarmProvider.base})` : ""}`);
      const tokens = JSON.stringify({ [plan.token]: plan.tenant });
      // 16 children reserve up to 16 model calls each: tools.swarm.maxModelCalls must hold them all.
      const swarmBindings: Record<string, string> = swarmProvider
        ? {
            CODEMODE_CONFIG: JSON.stringify({ models: { providers: chatProviders(swarmProvider.base) }, tools: { swarm: { maxModelCalls: 256 } } }),
            [CHAT_KEY_BINDING]: CHAT_KEY,
          }
        : {};
      let server: Server;
      try {
        server = await serveBundle(
          paths,
          "gateway",
          bundle.withTs,
          await readWranglerConfig(rootConfig),
          { GATEWAY_TOKENS: tokens, ...swarmBindings },
          "/healthz",
          t.readyMs,
        );
      } catch (error) {
        await swarmProvider?.close();
        throw error;
      }
      try {
        const gw = gatewayAt(server.base, plan.token, t.requestMs);
        if (has("exec")) results.exec = await measureExec(gw, plan.exec, t.childMs, log);
        if (has("suspend")) results.suspendHttp = await measureSuspendHttp(gw, plan.suspend, log);
        if (has("capacity")) results.capacity = await measureCapacity(gw, plan.capacity, log);
        if (swarmProvider) results.swarm = await measureSwarm(gw, swarmProvider, plan.swarm, log);
      } finally {
        await stopServer(server);
        await swarmProvider?.close();
      }
    }
  }

  if (has("vm") || has("suspend") || has("catalog") || has("toolsearch") || has("mcp") || has("chat")) {
    const benchConfig = path.join(BENCH_DIR, "wrangler.bench.toml");
    log("building the bench worker (wrangler deploy --dry-run -c bench/wrangler.bench.toml)");
    const bundle = await dryRun(paths, "bench-worker", benchConfig, [], t.dryRunMs);
    // Section 8's model provider runs in this process; its port goes into the gateway's provider catalog.
    const provider: FakeProvider | null = has("chat") ? await startFakeProvider(ROOT) : null;
    log(`serving the bench worker${provider ? ` (providers at the fake provider server, ${provider.base})` : ""}`);
    // The bench worker is also sections 6, 7 and 8's gateway (500-tool catalog): its token, agents and providers.
    // Its MCP servers (sections 7 and 8) listen on loopback: private addresses allowed, as a developer would.
    const config = {
      ...toolSearchConfig(plan.toolsearch),
      mcp: { allowPrivateAddresses: true },
      ...(provider ? { models: { providers: chatProviders(provider.base) } } : {}),
    };
    const bindings = {
      GATEWAY_TOKENS: JSON.stringify({ [plan.token]: plan.tenant }),
      CODEMODE_CONFIG: JSON.stringify(config),
      ...(provider ? { [CHAT_KEY_BINDING]: CHAT_KEY } : {}),
    };
    let server: Server;
    try {
      server = await serveBundle(paths, "vm", bundle, await readWranglerConfig(benchConfig), bindings, "/clock", t.readyMs);
    } catch (error) {
      await provider?.close();
      throw error;
    }
    try {
      const get = (route: string) => workerRoute(server.base, route, t.workerRouteMs);
      if (has("vm")) results.vm = await measureVm(get, plan.vm, log);
      if (has("suspend")) results.suspendIsolate = await measureSuspendIsolate(get, plan.suspend, log);
      if (has("catalog")) results.catalog = await measureCatalog(get, plan.catalog, log);
      if (has("toolsearch")) {
        const gw = gatewayAt(server.base, plan.token, t.requestMs);
        results.toolsearch = await measureToolSearch(gw, plan.toolsearch, paths, server.output, log);
      }
      if (has("mcp")) {
        log("[7] mcp: starting server-everything and the 300-tool MCP server on loopback");
        const mcpServers = await startMcpServers(ROOT, t.readyMs);
        try {
          results.mcp = await measureMcp(gatewayAt(server.base, plan.token, t.requestMs), plan.mcp, mcpServers, log);
        } finally {
          await stopMcpServers(mcpServers);
        }
      }
      if (provider) {
        log("[8] chat: starting the 300-tool MCP server on loopback; the fake provider server runs in this process");
        const tools = await startToolsServer(ROOT, t.readyMs);
        try {
          const gw = gatewayAt(server.base, plan.token, t.requestMs);
          results.chat = await measureChat({ gw, provider, mcpUrl: tools.base }, plan.chat, log);
        } finally {
          await stopServer(tools);
        }
      }
    } finally {
      await stopServer(server);
      await provider?.close();
    }
  }

  const partial = options.sections.size < SECTIONS.length ? [...options.sections].join(",") : null;
  const machine = describeMachine(ROOT, loadStart, { quick: options.quick, partial, elapsedS: (performance.now() - start) / 1000 });
  const md = renderReport(results, machine);
  fs.mkdirSync(OUT_DIR, { recursive: true });
  fs.writeFileSync(path.join(OUT_DIR, "BENCHMARKS.md"), md);
  fs.writeFileSync(
    path.join(OUT_DIR, "results.json"),
    JSON.stringify({ machine, options: { ...options, sections: [...options.sections] }, results }, null, 1) + "\n",
  );
  console.log("\n" + md);
  for (const g of goalRows(results)) log(`goal: ${g.goal} → ${g.status.replace(/\*\*/g, "")}`);
  log(`wrote ${path.relative(process.cwd(), path.join(OUT_DIR, "BENCHMARKS.md"))} and results.json`);
  if (options.write) {
    fs.writeFileSync(path.join(ROOT, "BENCHMARKS.md"), md);
    log("wrote BENCHMARKS.md");
  }
}

export function main(argv: string[]): void {
  run(argv).then(
    () => process.exit(0),
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(`bench: ${error.message}`);
        process.exit(64);
      }
      console.error(`bench: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
}
