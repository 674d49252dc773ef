/**
 * The bench's marginal `/chat` round trip (section 8, issue 22's line), A/B across builds: each
 * root's bench worker is built and served by its own Miniflare, then in interleaved rounds every
 * root runs section 8's code-mode task with `--extra` more `exec` round trips and without; per
 * round, (long − short) gateway time less provider, MCP server and cells (the bench's
 * `ownLessTools`) ÷ extra. Wall time, like the bench; chat-cpu-ab.ts gives workerd CPU instead.
 *
 *   node --experimental-strip-types bench/experiments/chat-wall-ab.ts [--rounds=11] [--calls=6] [--extra=12] <root> [<root> …]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer } from "../harness/workers.ts";
import { startFakeProvider } from "../harness/fake-provider.ts";
import { startToolsServer } from "../harness/measure-mcp.ts";
import { chatOnce, sum, type ChatSample } from "../harness/chat-calls.ts";
import { serveChatWorker } from "./chat-worker.ts";
import { abReport } from "./ab-report.ts";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROUNDS = Number(arg("rounds", "11"));
const CALLS = Number(arg("calls", "6"));
const EXTRA = Number(arg("extra", "12"));
const roots = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (roots.length === 0) roots.push(HERE);

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "chatwall-"));
const provider = await startFakeProvider(HERE);
const tools = await startToolsServer(HERE, 60_000);
const token = "ab-token";
/** The bench's `ownLessTools`: wall less the provider, the MCP server and the cells. */
const own = (s: ChatSample) => s.wallMs - sum(s.providerCalls) - s.mcpMs - s.toolsMs;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

type Served = { root: string; mf: { dispose(): Promise<void> }; once: (extra: number) => Promise<ChatSample> };
const served: Served[] = [];
try {
  for (const root of roots) {
    const { mf, base } = await serveChatWorker(root, tmpRoot, {
      label: `wall-${served.length}`,
      token,
      tenant: "ab",
      providerBase: provider.base,
      minify: true,
    });
    const gw = { base, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, timeoutMs: 60_000 };
    const d = { gw, provider, mcpUrl: tools.base };
    const session = `wall-${served.length}-${Date.now()}`;
    served.push({ root, mf, once: async (extra) => (await chatOnce(d as never, session, "codeMode", "openai", undefined, extra)).sample });
  }
  for (const s of served) for (let i = 0; i < 10; i++) await s.once(i % 2 ? EXTRA : 0);
  const marginal = new Map<Served, number[]>(served.map((s) => [s, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...served].reverse() : served;
    for (const s of order) {
      const long: number[] = [];
      const short: number[] = [];
      for (let i = 0; i < CALLS; i++)
        for (const extra of (r + i) % 2 ? [0, EXTRA] : [EXTRA, 0]) (extra ? long : short).push(own(await s.once(extra)));
      marginal.get(s)!.push((median(long) - median(short)) / EXTRA);
    }
  }
  for (const line of abReport(
    "marginal round trip",
    roots,
    served.map((s) => marginal.get(s)!),
  ))
    console.log(line);
} finally {
  for (const s of served) await s.mf.dispose();
  await stopServer(tools);
  await provider.close();
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
