/**
 * The shape of `exec` against the refused `wait` back to back, sample by sample: one production
 * build served as the bench serves it, then rounds of interleaved blocks (5 of each, the first of
 * a block not kept, as in the bench), each request's wall time and the workerd process's CPU
 * across it. Prints percentiles of wall and CPU per kind, per-round p50/p90 ratios, and how much of
 * the slowest decile is workerd's own CPU. Linux only.
 *
 *   node --experimental-strip-types bench/experiments/exec-dist.ts [--rounds=30] [--per=30] [--pause=0] [--cpu] [<root>]
 *
 * `--pause=10` waits that many ms before each request, as the bench's paced rows do.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer } from "../harness/workers.ts";
import { expectCompleted, expectRefusedWait, openTurn, timedTool } from "../harness/http.ts";
import { cpuMs } from "../harness/measure-startup.ts";
import { serveRoot } from "./serve-root.ts";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROUNDS = Number(arg("rounds", "30"));
const PER = Number(arg("per", "30"));
const BLOCK = 5;
const PAUSE = Number(arg("pause", "0"));
const root = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? HERE;
const TOKEN = "exec-dist-token";
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "execdist-"));
const { server, pid, gw } = await serveRoot(root, tmpRoot, "dist", TOKEN);
type Kind = "exec" | "wait";
let turn = await openTurn(gw, "d");
// Reading workerd's counters takes the client ~0.3 ms between requests: only with `--cpu`.
const CPU = process.argv.includes("--cpu");
const call = async (kind: Kind) => {
  if (PAUSE > 0) await new Promise((resolve) => setTimeout(resolve, PAUSE));
  const c0 = CPU ? cpuMs(pid) : 0;
  const { ms } =
    kind === "exec"
      ? await timedTool(gw, turn, "exec", { code: "return 1 + 2" }, expectCompleted("exec", 3))
      : await timedTool(gw, turn, "wait", {}, expectRefusedWait);
  return { ms, cpu: CPU ? cpuMs(pid) - c0 : NaN };
};
try {
  for (let i = 0; i < 40; i++) {
    await call("exec");
    await call("wait");
  }
  const all: Record<Kind, { ms: number; cpu: number; pos: number }[]> = { exec: [], wait: [] };
  const perRound: { p50: number; p90: number }[] = [];
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  };
  for (let round = 0; round < ROUNDS; round++) {
    turn = await openTurn(gw, "d", turn);
    const got: Record<Kind, number[]> = { exec: [], wait: [] };
    const order: Kind[] = round % 2 ? ["wait", "exec"] : ["exec", "wait"];
    while (got.exec.length < PER || got.wait.length < PER)
      for (const kind of order) {
        await call(kind);
        for (let i = 0; i < BLOCK && got[kind].length < PER; i++) {
          const s = await call(kind);
          got[kind].push(s.ms);
          all[kind].push({ ...s, pos: i });
        }
      }
    perRound.push({ p50: pct(got.exec, 0.5) / pct(got.wait, 0.5), p90: pct(got.exec, 0.9) / pct(got.wait, 0.9) });
  }
  const f = (x: number) => x.toFixed(2);
  for (const kind of ["exec", "wait"] as Kind[]) {
    const ms = all[kind].map((s) => s.ms);
    const cpu = all[kind].map((s) => s.cpu);
    console.log(
      `${kind}: wall p50 ${f(pct(ms, 0.5))} p75 ${f(pct(ms, 0.75))} p90 ${f(pct(ms, 0.9))} p95 ${f(pct(ms, 0.95))} p99 ${f(pct(ms, 0.99))}` +
        ` | workerd cpu p50 ${f(pct(cpu, 0.5))} p90 ${f(pct(cpu, 0.9))} p99 ${f(pct(cpu, 0.99))} mean ${f(cpu.reduce((a, b) => a + b, 0) / cpu.length)}`,
    );
    const cut = pct(ms, 0.9);
    const slow = all[kind].filter((s) => s.ms >= cut);
    const fast = all[kind].filter((s) => s.ms < pct(ms, 0.5));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    console.log(
      `  slowest decile: wall ${f(mean(slow.map((s) => s.ms)))} cpu ${f(mean(slow.map((s) => s.cpu)))}; fastest half: wall ${f(mean(fast.map((s) => s.ms)))} cpu ${f(mean(fast.map((s) => s.cpu)))}` +
        `; slow by position in block ${[0, 1, 2, 3, 4].map((p) => slow.filter((s) => s.pos === p).length).join("/")}`,
    );
  }
  const r50 = perRound.map((r) => r.p50);
  const r90 = perRound.map((r) => r.p90);
  console.log(`per-round ratio p50: median ${f(pct(r50, 0.5))} IQR ${f(pct(r50, 0.25))}–${f(pct(r50, 0.75))}`);
  console.log(`per-round ratio p90: median ${f(pct(r90, 0.5))} IQR ${f(pct(r90, 0.25))}–${f(pct(r90, 0.75))}`);
} finally {
  await stopServer(server);
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
