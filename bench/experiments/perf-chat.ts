/**
 * Where workerd's CPU goes in section 8's marginal `/chat` round trip, by `perf` (Linux): the bench
 * worker built unminified, its info log lines dropped, served by Miniflare with V8's perf map on
 * (no inspector), the fake provider and the 300-tool MCP server of section 8. After a warm-up,
 * `perf record` of the workerd process over N calls of the task with `--extra` more `exec` round
 * trips, then over N calls of the task alone; (long − short) ÷ (N × extra) per symbol is what one
 * round trip costs, JIT code, wasm, builtins, SQLite and the runtime's C++ alike. perf's software
 * clock counts CPU time only: waits (the provider, fsync) are not in it. Totals read ~2× chat-cpu-ab.ts's
 * (V8 writes its perf map as it compiles, and perf samples the kernel's side of every syscall on a
 * virtual machine): compare shares, not totals, and A/B builds with chat-cpu-ab.ts.
 *
 *   node --experimental-strip-types bench/experiments/perf-chat.ts [--n=40] [--extra=12] [--top=60]
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer } from "../harness/workers.ts";
import { startFakeProvider } from "../harness/fake-provider.ts";
import { startToolsServer } from "../harness/measure-mcp.ts";
import { chatOnce } from "../harness/chat-calls.ts";
import { serveChatWorker } from "./chat-worker.ts";
import { startedWorkerd } from "./workerd-pid.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const N = Number(arg("n", "40"));
const EXTRA = Number(arg("extra", "12"));
const TOP = Number(arg("top", "60"));

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "perfchat-"));
const provider = await startFakeProvider(ROOT);
const tools = await startToolsServer(ROOT, 60_000);
process.env.MINIFLARE_WORKERD_V8_FLAGS = "--perf-basic-prof";
const token = "perf-token";
const { started, pid } = await startedWorkerd(() =>
  serveChatWorker(ROOT, tmpRoot, { label: "perf-chat", token, tenant: "perf", providerBase: provider.base, minify: false, quiet: true }),
);
const { mf, base } = started;

/** Self CPU ms per symbol over the calls `run` makes, from perf's cpu-clock samples (periods in ns). */
async function recorded(name: string, run: () => Promise<void>): Promise<Map<string, number>> {
  const file = path.join(tmpRoot, `${name}.data`);
  const rec = spawn("perf", ["record", "-F", "10000", "-p", String(pid), "-o", file], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 300));
  await run();
  rec.kill("SIGINT");
  await new Promise((r) => rec.on("exit", r));
  const rep = spawnSync("perf", ["report", "-i", file, "--no-children", "--sort", "dso,sym", "--stdio", "-F", "period,dso,sym", "-t", "|"], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  const self = new Map<string, number>();
  for (const line of rep.stdout.split("\n")) {
    const m = /^\s*(\d+)\s*\|([^|]*)\|\s*\[[^\]]+\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const dso = m[2]!
      .trim()
      .replace(/^\[JIT\].*/, "JIT")
      .replace(/.*\//, "");
    const sym = `${m[3]!
      .trim()
      .replace(/^JS:[*~^+]?'?/, "")
      .slice(0, 90)} [${dso}]`;
    self.set(sym, (self.get(sym) ?? 0) + Number(m[1]) / 1e6);
  }
  return self;
}

try {
  const gw = { base, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, timeoutMs: 60_000 };
  const d = { gw, provider, mcpUrl: tools.base };
  const session = `perf-${Date.now()}`;
  const calls = (extra: number) => async () => {
    for (let i = 0; i < N; i++) await chatOnce(d as never, session, "codeMode", "openai", undefined, extra);
  };
  for (let i = 0; i < 10; i++) {
    await chatOnce(d as never, session, "codeMode", "openai", undefined, EXTRA);
    await chatOnce(d as never, session, "codeMode", "openai", undefined, 0);
  }
  const long = await recorded("long", calls(EXTRA));
  const short = await recorded("short", calls(0));
  const per = (m: Map<string, number>, k: string) => (m.get(k) ?? 0) / (N * EXTRA);
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  console.log(`workerd CPU per marginal round trip: ${((total(long) - total(short)) / (N * EXTRA)).toFixed(3)} ms`);
  const rows = [...new Set([...long.keys(), ...short.keys()])].map((k) => [k, per(long, k) - per(short, k)] as const);
  rows.sort((a, b) => b[1] - a[1]);
  console.log("\nms per round trip  symbol");
  for (const [k, v] of rows.slice(0, TOP)) console.log(`${v.toFixed(4).padStart(8)}  ${k}`);
  const byDso = new Map<string, number>();
  for (const [k, v] of rows) {
    const dso = k.replace(/.*\[(.*)\]$/, "$1");
    byDso.set(dso, (byDso.get(dso) ?? 0) + v);
  }
  console.log("\nby object:");
  for (const [k, v] of [...byDso].sort((a, b) => b[1] - a[1])) console.log(`${v.toFixed(4).padStart(8)}  ${k}`);
} finally {
  await mf.dispose();
  await stopServer(tools);
  await provider.close();
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
