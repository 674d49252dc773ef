/**
 * CPU of one `/chat` model round trip inside workerd, A/B across builds: each root's bench worker
 * is built and served by its own Miniflare (no inspector), then in interleaved rounds every root
 * runs section 8's task with `--extra` more `exec` round trips and without; the workerd process's
 * CPU (the scheduler's nanosecond counters of its threads, /proc/<pid>/task/N/schedstat) per call is taken, and the
 * difference ÷ extra is the marginal round trip's CPU. The profiler inflates wasm and console work;
 * this does not, and workerd's frozen clock does not matter to it. Linux only.
 *
 *   node --experimental-strip-types bench/experiments/chat-cpu-ab.ts [--rounds=8] [--calls=6] [--extra=4] <root> [<root> …]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer } from "../harness/workers.ts";
import { startFakeProvider } from "../harness/fake-provider.ts";
import { startToolsServer } from "../harness/measure-mcp.ts";
import { chatOnce } from "../harness/chat-calls.ts";
import { serveChatWorker } from "./chat-worker.ts";
import { abReport } from "./ab-report.ts";
import { cpuMs } from "../harness/measure-startup.ts";
import { startedWorkerd } from "./workerd-pid.ts";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROUNDS = Number(arg("rounds", "8"));
const CALLS = Number(arg("calls", "6"));
const EXTRA = Number(arg("extra", "4"));
const roots = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (roots.length === 0) roots.push(HERE);

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "chatab-"));
const provider = await startFakeProvider(HERE);
const tools = await startToolsServer(HERE, 60_000);
const token = "ab-token";

type Served = { root: string; mf: any; pid: number; once: (extra: number) => Promise<unknown> };
const served: Served[] = [];
try {
  for (const root of roots) {
    const {
      started: { mf, base },
      pid,
    } = await startedWorkerd(() =>
      serveChatWorker(root, tmpRoot, {
        label: `ab-${served.length}`,
        token,
        tenant: "ab",
        providerBase: provider.base,
        minify: true,
      }),
    );
    const gw = { base, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, timeoutMs: 60_000 };
    const d = { gw, provider, mcpUrl: tools.base };
    const session = `ab-${served.length}-${Date.now()}`;
    served.push({ root, mf, pid, once: (extra) => chatOnce(d as never, session, "codeMode", "openai", undefined, extra) });
  }
  for (const s of served) for (let i = 0; i < 10; i++) await s.once(i % 2 ? EXTRA : 0);
  const per = new Map<Served, { long: number[]; short: number[] }>(served.map((s) => [s, { long: [], short: [] }]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...served].reverse() : served;
    for (const s of order)
      for (const extra of r % 2 ? [0, EXTRA] : [EXTRA, 0]) {
        const c0 = cpuMs(s.pid);
        for (let i = 0; i < CALLS; i++) await s.once(extra);
        per.get(s)![extra ? "long" : "short"].push((cpuMs(s.pid) - c0) / CALLS);
      }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  for (const s of served) {
    const { long, short } = per.get(s)!;
    console.log(`${s.root}: workerd CPU per /chat call ${median(short).toFixed(2)} ms (task), ${median(long).toFixed(2)} ms (+${EXTRA} round trips)`);
  }
  const marginal = served.map((s) => per.get(s)!.long.map((l, i) => (l - per.get(s)!.short[i]!) / EXTRA));
  for (const line of abReport("workerd CPU per marginal round trip", roots, marginal)) console.log(line);
} finally {
  for (const s of served) await s.mf.dispose();
  await stopServer(tools);
  await provider.close();
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
