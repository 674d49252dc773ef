/**
 * What an `exec` of a trivial cell costs workerd over a refused `wait` (a Durable Object round trip
 * that records the call the same way), in CPU and in wall time, A/B across builds: each root's
 * production build is served by its own workerd, then in interleaved rounds each root takes, on a
 * new turn of its session, a block of execs and a block of refused waits back to back. CPU is the
 * workerd process's (the scheduler's counters of its threads, /proc/<pid>/task/N/schedstat), so the
 * profiler's overhead and workerd's frozen clock do not enter. `--counted` also times the refused
 * wait on a turn past its 2,000 trajectory events (calls counted, not recorded): what recording a
 * call's events costs. Linux only.
 *
 *   node --experimental-strip-types bench/experiments/exec-cpu-ab.ts [--rounds=10] [--calls=100] [--counted] <root> [<root> …]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer, type Server } from "../harness/workers.ts";
import { expectCompleted, expectRefusedWait, openTurn, timedTool, type Gateway, type Turn } from "../harness/http.ts";
import { cpuMs } from "../harness/measure-startup.ts";
import { serveRoot } from "./serve-root.ts";
import { abReport } from "./ab-report.ts";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROUNDS = Number(arg("rounds", "10"));
const CALLS = Number(arg("calls", "100"));
const COUNTED = process.argv.includes("--counted");
const roots = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (roots.length === 0) roots.push(HERE);

const TOKEN = "exec-cpu-ab-token";
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "execab-"));

type Kind = "exec" | "wait" | "counted";
type Root = { root: string; server: Server; pid: number; gw: Gateway; turn: Turn; counted: Turn | null };

async function call(r: Root, kind: Kind): Promise<number> {
  if (kind === "exec") return (await timedTool(r.gw, r.turn, "exec", { code: "return 1 + 2" }, expectCompleted("exec", 3))).ms;
  return (await timedTool(r.gw, kind === "counted" ? r.counted! : r.turn, "wait", {}, expectRefusedWait)).ms;
}

const served: Root[] = [];
try {
  for (const root of roots) {
    const { server, pid, gw } = await serveRoot(root, tmpRoot, `ab-${served.length}`, TOKEN);
    const r: Root = { root, server, pid, gw, turn: await openTurn(gw, "ab"), counted: null };
    for (let i = 0; i < 100; i++) {
      await call(r, "exec");
      await call(r, "wait");
    }
    if (COUNTED) {
      // 2 events a call: past 1,000 calls the turn only counts them.
      r.counted = await openTurn(gw, "ab", r.turn);
      const swap = r.turn;
      r.turn = r.counted;
      for (let i = 0; i < 1_050; i++) await call(r, "wait");
      r.turn = swap;
    }
    served.push(r);
  }
  const kinds: Kind[] = COUNTED ? ["exec", "wait", "counted"] : ["exec", "wait"];
  const cpu = new Map(served.map((r) => [r, Object.fromEntries(kinds.map((k) => [k, [] as number[]])) as Record<Kind, number[]>]));
  const wall = new Map(served.map((r) => [r, Object.fromEntries(kinds.map((k) => [k, [] as number[]])) as Record<Kind, number[]>]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const r of round % 2 ? [...served].reverse() : served) {
      r.turn = await openTurn(r.gw, "ab", r.turn);
      for (const kind of round % 2 ? [...kinds].reverse() : kinds) {
        await call(r, kind); // back to back from here: the block before left its deferred work to this one
        const c0 = cpuMs(r.pid);
        const times: number[] = [];
        for (let i = 0; i < CALLS; i++) times.push(await call(r, kind));
        cpu.get(r)![kind].push((cpuMs(r.pid) - c0) / CALLS);
        wall.get(r)![kind].push(times.sort((a, b) => a - b)[times.length >> 1]!);
      }
    }
  }
  for (const kind of kinds) {
    for (const line of abReport(
      `workerd CPU per ${kind}`,
      roots,
      served.map((r) => cpu.get(r)![kind]),
    ))
      console.log(line);
    for (const line of abReport(
      `median wall per ${kind}`,
      roots,
      served.map((r) => wall.get(r)![kind]),
    ))
      console.log(line);
  }
  const over = (m: typeof cpu, kind: Kind) => served.map((r) => m.get(r)![kind].map((x, i) => x - m.get(r)!.wait[i]!));
  for (const line of abReport("exec − wait, workerd CPU", roots, over(cpu, "exec"))) console.log(line);
  for (const line of abReport("exec − wait, median wall", roots, over(wall, "exec"))) console.log(line);
  if (COUNTED)
    for (const line of abReport(
      "wait on a recording turn − on a counting one, median wall",
      roots,
      over(wall, "counted").map((xs) => xs.map((x) => -x)),
    ))
      console.log(line);
} finally {
  for (const r of served) await stopServer(r.server);
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
