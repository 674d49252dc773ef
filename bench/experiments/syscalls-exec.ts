/**
 * Syscalls per `exec` and per refused `wait` (back to back): strace -c on the serving workerd across N
 * requests of one kind, after a warm-up. Shows what each kind asks of the kernel (fsyncs: commits).
 *
 *   node --experimental-strip-types bench/experiments/syscalls-exec.ts [--n=200] [<root>]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer } from "../harness/workers.ts";
import { expectCompleted, expectRefusedWait, openTurn, timedTool } from "../harness/http.ts";
import { serveRoot } from "./serve-root.ts";

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const N = Number(process.argv.find((a) => a.startsWith("--n="))?.slice(4) ?? "200");
const root = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? HERE;
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "sysexec-"));
const { server, pid, gw } = await serveRoot(root, tmpRoot, "sys", "sys-token");
try {
  let turn = await openTurn(gw, "s");
  const run = (kind: "exec" | "wait") =>
    kind === "exec"
      ? timedTool(gw, turn, "exec", { code: "return 1 + 2" }, expectCompleted("exec", 3))
      : timedTool(gw, turn, "wait", {}, expectRefusedWait);
  for (let i = 0; i < 50; i++) {
    await run("exec");
    await run("wait");
  }
  for (const kind of ["exec", "wait"] as const) {
    turn = await openTurn(gw, "s", turn);
    for (let i = 0; i < 10; i++) await run(kind);
    const out = path.join(tmpRoot, `${kind}.strace`);
    const args = process.argv.includes("--trace") ? ["-f", "-s", "120", "-e", "trace=write,futex", "-o", out] : ["-c", "-f", "-o", out];
    const st = spawn("strace", [...args, "-p", String(pid)], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < N; i++) await run(kind);
    await new Promise((r) => setTimeout(r, 200));
    st.kill("SIGINT");
    await new Promise((r) => st.on("exit", r));
    if (process.argv.includes("--trace")) {
      console.log(fs.readFileSync(out, "utf8").split("\n").slice(0, 60).join("\n"));
      continue;
    }
    const lines = fs
      .readFileSync(out, "utf8")
      .split("\n")
      .filter((l) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+/.test(l));
    console.log(`${kind}: per request`);
    for (const l of lines) {
      const f = l.trim().split(/\s+/);
      const calls = Number(f[3]);
      const name = f[f.length - 1];
      if (calls / N >= 0.5) console.log(`  ${name.padEnd(16)} ${(calls / N).toFixed(2)}`);
    }
  }
} finally {
  await stopServer(server);
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
