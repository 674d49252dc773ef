/**
 * Where a `/chat` call of section 8's task spends its CPU inside workerd: builds the bench worker
 * unminified, serves it with Miniflare and the V8 inspector on, with the fake provider and the
 * 300-tool MCP server of section 8, warms up, then takes a sampling CPU profile over N `/chat`
 * calls (code mode, OpenAI wire) and prints self and inclusive time per function, per call.
 *
 *   node --experimental-strip-types bench/experiments/profile-chat.ts [--n=60] [--surface=codeMode|direct] [--keep=/tmp/chat.cpuprofile] [--opening]
 *
 * `--extra=N` runs the task with N more `exec` round trips (compare with N = 0 for a round trip's own cost).
 * `--opening` profiles section 8's turn opening alone (`POST …/turns` with the task's turn fields,
 * the MCP listing cached after the warm-up) instead of whole `/chat` calls.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer } from "../harness/workers.ts";
import { startFakeProvider } from "../harness/fake-provider.ts";
import { startToolsServer } from "../harness/measure-mcp.ts";
import { chatOnce, openOnce } from "../harness/chat-calls.ts";
import type { ChatSurface } from "../harness/chat-task.ts";
import { serveChatWorker } from "./chat-worker.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const N = Number(arg("n", "60"));
const SURFACE = arg("surface", "codeMode") as ChatSurface;
const KEEP = arg("keep", "");
const TOP = Number(arg("top", "45"));
const OPENING = process.argv.includes("--opening");
/** `--extra=N`: the long task (N more `exec` round trips, as the bench's marginal round trip). */
const EXTRA = Number(arg("extra", "0"));

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "chatprof-"));
const provider = await startFakeProvider(ROOT);
const tools = await startToolsServer(ROOT, 60_000);
const token = "prof-token";
const inspectorPort = 9229 + Math.floor(Math.random() * 500);
const { mf, base } = await serveChatWorker(ROOT, tmpRoot, {
  label: "chat-prof",
  token,
  tenant: "prof",
  providerBase: provider.base,
  minify: false,
  inspectorPort,
});
try {
  const gw = { base, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, timeoutMs: 60_000 };
  const d = { gw, provider, mcpUrl: tools.base };
  const session = `prof-${Date.now()}`;
  const once = async () => (await chatOnce(d as never, session, SURFACE, "openai", undefined, EXTRA)).sample;
  const openings: number[] = [];
  const open = async () => openings.push((await openOnce(d as never, session, SURFACE)).wallMs);
  for (let i = 0; i < 20; i++) await once();

  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((t: { id?: string; title?: string }) => /gateway/.test(t.id ?? t.title ?? "")) ?? targets[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((r, j) => ((ws.onopen = r), (ws.onerror = j)));
  let seq = 0;
  const waiting = new Map<number, (m: any) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data));
    if (msg.id && waiting.has(msg.id)) waiting.get(msg.id)!(msg);
  };
  const send = (method: string, params = {}) =>
    new Promise<any>((r) => {
      const id = ++seq;
      waiting.set(id, r);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 50 });
  await send("Profiler.start");
  const roundTrip: number[] = [];
  const perCall: number[][] = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    if (OPENING) {
      await open();
      continue;
    }
    const s = await once();
    roundTrip.push(s.modelCalls.reduce((a, b, k) => a + b - s.providerCalls[k]!, 0) / s.turns);
    s.modelCalls.forEach((m, k) => (perCall[k] ??= []).push(m - s.providerCalls[k]!));
  }
  const wall = performance.now() - t0;
  const { result } = await send("Profiler.stop");
  ws.close();
  if (KEEP) fs.writeFileSync(KEEP, JSON.stringify(result.profile));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!.toFixed(2);
  if (OPENING) console.log(`turn opening wall (under the profiler): median ${median(openings)} ms`);
  else
    console.log(
      `round trip in the isolate less the provider (under the profiler): median ${median(roundTrip)} ms; per call ${perCall.map(median).join(", ")} ms`,
    );
  report(result.profile, wall);
} finally {
  await mf.dispose();
  await stopServer(tools);
  await provider.close();
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}

function report(profile: any, wall: number) {
  const byId = new Map<number, any>(profile.nodes.map((n: any) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const key = (n: any) => `${n.callFrame.functionName || "(anon)"} ${path.basename(n.callFrame.url || "")}:${n.callFrame.lineNumber + 1}`;
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id: number, i: number) => {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const k = key(byId.get(id));
    if (/\(idle\)|\(program\)/.test(k)) idle += ms;
    total += ms;
    self.set(k, (self.get(k) ?? 0) + ms);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = key(byId.get(cur));
      if (seen.has(kk)) continue;
      seen.add(kk);
      incl.set(kk, (incl.get(kk) ?? 0) + ms);
    }
  });
  const per = (ms: number) => (ms / N).toFixed(3);
  console.log(
    `${N} /chat calls, wall ${wall.toFixed(0)} ms (${per(wall)} ms/call); sampled ${per(total)} ms/call, of which idle/program ${per(idle)}`,
  );
  console.log("\nself time (ms per /chat):");
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${per(v).padStart(8)}  ${k}`);
  console.log("\ninclusive time (ms per /chat):");
  for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, TOP * 3)) console.log(`${per(v).padStart(8)}  ${k}`);
}
