/**
 * Section 9b: the production build's cold start in workerd, each round in two fresh workerds
 * (Miniflare, as bundled with wrangler: one for the imports, one for the first cells), so every
 * isolate starts cold; neither timed request is its process's first (see measureStartup). Figures are CPU time of
 * the workerd process (every thread's run time from /proc/<pid>/task/<tid>/schedstat, in ns)
 * across one request, not wall time: on a shared machine the wall time of a request grows with
 * the load, its CPU time hardly at all. (A V8 CPU profile, as `wrangler check startup` takes,
 * times samples by the wall clock too, so it inflates the same way.)
 *
 *  - Startup: the first request of a worker whose entry imports the main module then (what the
 *    platform does when the isolate starts: parse, compile and evaluate it, top-level code
 *    included). Baseline in the same rounds: the same entry importing a one-line module (the
 *    request and the dynamic import by themselves).
 *  - First TypeScript cell: the first `exec` of a fresh isolate in TypeScript against the first
 *    in JavaScript (each in its own worker, hence its own isolate, of the same workerd), after one
 *    turn has been opened in each so module evaluation is behind both. The difference is what the
 *    first TypeScript cell adds: its first transpile (this cell takes the fast path, sucrase; the
 *    compiler module, timed on its own, loads only for a cell the fast path cannot take).
 */
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { perRound, pooled, summarize, type RoundSamples, type Summary } from "./stats.ts";
import type { Bundle, WorkerConfig } from "./workers.ts";

export interface StartupPlan {
  rounds: number;
  token: string;
  tenant: string;
  timeoutMs: number;
}

export interface StartupFigures {
  plan: StartupPlan;
  /** CPU ms of importing the main module, of importing the one-line floor module, and their difference (per round). */
  startup: { main: Summary; floor: Summary; mainOverFloor: Summary };
  /** CPU ms of importing the TypeScript compiler module alone (where the first TypeScript cell's time goes), or null without one. */
  compilerModule: Summary | null;
  /** CPU ms of the first exec of a fresh isolate (per round), and TypeScript − JavaScript per round. */
  firstCell: { javascript: Summary; typescript: Summary; extra: Summary };
  samples: { main: number[]; floor: number[]; compiler: number[]; javascript: number[]; typescript: number[] };
}

const FLOOR_MODULE = "startup-floor.mjs";
const ENTRY = "startup-entry.mjs";

/**
 * The startup worker: imports `target` on its first request. For the TypeScript compiler module,
 * as src/source/typescript-compiler.ts imports it (`process.browser` set, so it builds no Node host).
 */
function importingEntry(target: string, asBrowser = false): string {
  const before = asBrowser ? "if (globalThis.process) globalThis.process.browser = true; " : "";
  return `export default { async fetch() { ${before}await import(${JSON.stringify(`./${target}`)}); return new Response("ok"); } };`;
}

/** The upload's modules as Miniflare takes them, named as the upload names them. */
function bundleModules(b: Bundle): { type: string; path: string; contents: Uint8Array }[] {
  return (fs.readdirSync(b.outdir, { recursive: true }) as unknown[])
    .map(String)
    .filter((f) => /\.(m?js|wasm)$/.test(f))
    .sort()
    .map((f) => ({ type: f.endsWith(".wasm") ? "CompiledWasm" : "ESModule", path: f, contents: fs.readFileSync(path.join(b.outdir, f)) }));
}

/** The workerd child this process started last (Miniflare spawns it; it does not say its pid). */
export function workerdPid(known: ReadonlySet<number>): number {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || known.has(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may hold spaces, so split after its closing parenthesis.
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "workerd" && ppid === process.pid) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  if (found.length !== 1) throw new Error(`expected one new workerd child of this process, found ${found.length}`);
  return found[0]!;
}

/** CPU time (ms) every thread of `pid` has run so far. */
export function cpuMs(pid: number): number {
  let ns = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended meanwhile: its time is lost to both sides alike
    }
  }
  return ns / 1e6;
}

/** CPU ms workerd spent while `work` ran. */
async function cpuOf(pid: number, work: () => Promise<void>): Promise<number> {
  const before = cpuMs(pid);
  await work();
  return cpuMs(pid) - before;
}

export async function loadMiniflare(root: string): Promise<any> {
  // The Miniflare that ships with (and matches the workerd of) the project's wrangler.
  const requireFromWrangler = createRequire(path.join(root, "node_modules", "wrangler", "package.json"));
  return import(pathToFileURL(requireFromWrangler.resolve("miniflare")).href);
}

export async function measureStartup(
  root: string,
  bundle: Bundle,
  config: WorkerConfig,
  plan: StartupPlan,
  log: (msg: string) => void,
): Promise<StartupFigures> {
  log(`[9] startup: ${plan.rounds} rounds, each a fresh workerd: CPU of evaluating the main module, of the first JS and TS cells`);
  const { Miniflare, convertV4MiniflareOptions } = await loadMiniflare(root);
  const modules = bundleModules(bundle);
  const common = { compatibilityDate: config.compatibilityDate, compatibilityFlags: config.compatibilityFlags, modulesRoot: "/" };
  const durableObjects = Object.fromEntries(Object.entries(config.durableObjects).map(([b, className]) => [b, { className, useSQLite: true }]));
  const gateway = (name: string) => ({
    ...common,
    name,
    modules: [modules.find((m) => m.path === bundle.entry)!, ...modules.filter((m) => m.path !== bundle.entry)],
    bindings: { GATEWAY_TOKENS: JSON.stringify({ [plan.token]: plan.tenant }) },
    durableObjects,
  });
  const importing = (name: string, target: string, extra: { type: string; path: string; contents: Uint8Array | string }[], asBrowser = false) => ({
    ...common,
    name,
    modules: [{ type: "ESModule", path: ENTRY, contents: importingEntry(target, asBrowser) }, ...extra],
  });
  const compiler =
    bundle.compilerModule && bundle.compilerModule !== bundle.entry ? modules.find((m) => m.path === bundle.compilerModule) : undefined;
  const samples = { main: [] as number[], floor: [] as number[], compiler: [] as number[], javascript: [] as number[], typescript: [] as number[] };
  const known = new Set<number>();
  // A fresh workerd per round for the imports, with no gateway in it: a gateway loads the main module
  // at startup, and its isolate's background work (V8's compiler and GC threads) could land in whichever
  // import is timed. The process's first request costs 8–10 ms more CPU than its later ones (measured:
  // whichever import went first carried it); it goes to a worker of its own, untimed.
  const fresh = async <T>(workers: unknown[], work: (mf: any, pid: number) => Promise<T>): Promise<T> => {
    const mf = new Miniflare(convertV4MiniflareOptions({ workers, handleStructuredLogs: () => undefined }));
    try {
      await mf.ready;
      const pid = workerdPid(known);
      known.add(pid);
      return await work(mf, pid);
    } finally {
      await mf.dispose();
    }
  };
  for (let round = 0; round < plan.rounds; round++) {
    await fresh(
      [
        importing("startup-main", bundle.entry, modules),
        importing("startup-floor", FLOOR_MODULE, [{ type: "ESModule", path: FLOOR_MODULE, contents: "export const floor = 1;" }]),
        importing("startup-warm", FLOOR_MODULE, [{ type: "ESModule", path: FLOOR_MODULE, contents: "export const floor = 1;" }]),
        ...(compiler ? [importing("startup-compiler", compiler.path, [compiler], true)] : []),
      ],
      async (mf, pid) => {
        const hit = (name: string) => async () => {
          const worker = await mf.getWorker(name);
          const res = await worker.fetch("http://startup.bench/", { signal: AbortSignal.timeout(plan.timeoutMs) });
          const text = await res.text();
          if (res.status !== 200) throw new Error(`${name}: ${res.status} ${text.slice(0, 500)}`);
        };
        await hit("startup-warm")();
        const order = round % 2 === 0 ? (["main", "floor"] as const) : (["floor", "main"] as const);
        for (const which of order) samples[which].push(await cpuOf(pid, hit(`startup-${which}`)));
        if (compiler) samples.compiler.push(await cpuOf(pid, hit("startup-compiler")));
      },
    );
    // The first cells' workerd, warmed first by a cell in a third isolate: the process's first cell costs
    // ~25 ms more CPU than a first cell of a later isolate (work done once per process and shared), which
    // whichever language ran first would carry.
    await fresh([gateway("first-warm"), gateway("first-js"), gateway("first-ts")], async (mf, pid) => {
      await firstCell(mf, pid, "javascript", plan, "first-warm");
      const langs = round % 2 === 0 ? (["javascript", "typescript"] as const) : (["typescript", "javascript"] as const);
      for (const language of langs) samples[language].push(await firstCell(mf, pid, language, plan));
    });
    log(
      `[9] startup: round ${round + 1}/${plan.rounds}: main module ${samples.main.at(-1)!.toFixed(1)} ms CPU, floor ${samples.floor.at(-1)!.toFixed(1)} ms, ` +
        `TypeScript module ${compiler ? samples.compiler.at(-1)!.toFixed(1) : "n/a"} ms; ` +
        `first JS cell ${samples.javascript.at(-1)!.toFixed(1)} ms CPU, first TS cell ${samples.typescript.at(-1)!.toFixed(1)} ms`,
    );
  }
  const rounds = (v: number[]): RoundSamples => v.map((s) => [s]);
  return {
    plan,
    startup: {
      main: summarize(samples.main),
      floor: summarize(samples.floor),
      mainOverFloor: summarize(perRound(rounds(samples.main), rounds(samples.floor), (a, b) => a - b)),
    },
    compilerModule: samples.compiler.length > 0 ? summarize(samples.compiler) : null,
    firstCell: {
      javascript: pooled(rounds(samples.javascript)),
      typescript: pooled(rounds(samples.typescript)),
      extra: summarize(perRound(rounds(samples.typescript), rounds(samples.javascript), (a, b) => a - b)),
    },
    samples,
  };
}

/** Open a turn on a fresh gateway isolate (untimed: module evaluation happens here), then the CPU of its first exec. */
async function firstCell(
  mf: any,
  pid: number,
  language: "javascript" | "typescript",
  plan: StartupPlan,
  name = language === "javascript" ? "first-js" : "first-ts",
): Promise<number> {
  const worker = await mf.getWorker(name);
  const headers = { authorization: `Bearer ${plan.token}`, "content-type": "application/json" };
  const call = async (url: string, body: unknown) => {
    const res = await worker.fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(plan.timeoutMs) });
    const text = await res.text();
    try {
      return { status: res.status as number, json: JSON.parse(text) };
    } catch {
      throw new Error(`${name} ${url}: ${res.status}, not JSON: ${text.slice(0, 300)}`);
    }
  };
  const base = `http://startup.bench/v1/sessions/first-${language}-${Date.now().toString(36)}`;
  const opened = await call(`${base}/turns`, {});
  if (opened.status !== 201 || typeof opened.json.turnId !== "string")
    throw new Error(`${name}: open turn: ${opened.status} ${JSON.stringify(opened.json).slice(0, 300)}`);
  const code = language === "typescript" ? "const n: number = 1 + 2; return n;" : "const n = 1 + 2; return n;";
  let r = { status: 0, json: null as any };
  const ms = await cpuOf(pid, async () => {
    r = await call(`${base}/turns/${opened.json.turnId}/tools/exec`, { code, language });
  });
  if (r.status !== 200 || r.json.status !== "completed" || r.json.value !== 3)
    throw new Error(`${name}: first ${language} cell: ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
  return ms;
}
