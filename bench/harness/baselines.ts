/**
 * The two alternatives to our exec path that section 1 measures in the same rounds, each
 * running the same cell (`return 1 + 2`, as an async function body) and checking its value:
 *
 *   - a Node process per cell: `node -e` (spawn → V8 start → run → JSON on stdout → exit), the
 *     isolation a user gets from the operating system;
 *   - a bare quickjs-wasi VM per cell in plain Node: `QuickJS.create` from the compiled module
 *     (compiled once, as workerd holds the imported module), `evalCode` of the cell, drain the
 *     job queue, read the value, `dispose` — the same engine work our cell does, in this harness
 *     process, without HTTP, the Worker, the Durable Object, our prelude, tools or limits. The
 *     strongest in-process alternative a user could pick.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import { runInNewContext } from "node:vm";
import v8 from "node:v8";
import { QuickJS } from "quickjs-wasi";
import { trackPlain, untrackPlain } from "./supervise.ts";
import type { ChildProcess } from "node:child_process";

/** The cell wrapped as our exec runs it: an async function body whose value is the result. */
function asyncWrapped(code: string): string {
  return `(async function () { ${code} })()`;
}

/** A Node process per cell; resolves to the wall time from spawn to exit (ms). */
export function nodeProcessCell(code: string, expected: unknown, timeoutMs: number): () => Promise<number> {
  const program =
    `${asyncWrapped(code)}.then(` +
    `(value) => { process.stdout.write(JSON.stringify({ status: "completed", value })); },` +
    `(error) => { process.stdout.write(JSON.stringify({ status: "failed", error: String(error) })); process.exitCode = 1; });`;
  return () =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const child: ChildProcess = spawn(process.execPath, ["-e", program], { stdio: ["ignore", "pipe", "pipe"] });
      trackPlain(child);
      let out = "";
      let err = "";
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.stdout?.on("data", (d: unknown) => (out += String(d)));
      child.stderr?.on("data", (d: unknown) => (err += String(d)));
      child.on("error", (e: Error) => {
        clearTimeout(timer);
        untrackPlain(child);
        reject(e);
      });
      child.on("close", (code: number | null, signal: string | null) => {
        const ms = performance.now() - t0;
        clearTimeout(timer);
        untrackPlain(child);
        let json: { status?: string; value?: unknown };
        try {
          json = JSON.parse(out);
        } catch {
          return reject(new Error(`node -e: exit ${code ?? signal}, bad output ${JSON.stringify(out.slice(0, 200))} ${err.slice(0, 300)}`));
        }
        if (code !== 0 || json.status !== "completed" || json.value !== expected) {
          return reject(new Error(`node -e: unexpected result ${JSON.stringify(json)} (exit ${code})`));
        }
        resolve(ms);
      });
    });
}

/** The engine's module, compiled once from the package's quickjs.wasm (outside any timing). */
async function compiledEngine(): Promise<WebAssembly.Module> {
  const require = createRequire(import.meta.url);
  const bytes: Uint8Array = fs.readFileSync(require.resolve("quickjs-wasi/quickjs.wasm"));
  return WebAssembly.compile(bytes);
}

/**
 * A fresh quickjs-wasi VM per cell in this process; resolves to the time of one cell
 * (create + eval + drain jobs + read value + dispose), in ms.
 */
export async function bareVmCell(code: string, expected: unknown): Promise<() => Promise<number>> {
  const wasm = await compiledEngine();
  const source = asyncWrapped(code);
  return async () => {
    const t0 = performance.now();
    const vm = await QuickJS.create({ wasm });
    let value: unknown;
    try {
      const promise = vm.evalCode(source);
      vm.executePendingJobs();
      const settled = await vm.resolvePromise(promise);
      promise.dispose();
      if ("error" in settled) {
        const error = vm.dump(settled.error);
        settled.error.dispose();
        throw new Error(`bare VM cell failed: ${JSON.stringify(error)}`);
      }
      value = vm.dump(settled.value);
      settled.value.dispose();
    } finally {
      vm.dispose();
    }
    const ms = performance.now() - t0;
    if (value !== expected) throw new Error(`bare VM cell returned ${JSON.stringify(value)}`);
    return ms;
  };
}

/**
 * A full, synchronous collection of this process's heap. The bare VM baseline leaves a wasm
 * instance and its memory per cell: about one mark-compact of this process per 25 cells, most
 * finalized later from a task, inside whatever sample is being timed then (an exec's, a `wait`'s:
 * 58 pauses of 3–19 ms in one run of section 1) and with marking threads competing with workerd
 * for the cores. Run untimed after each of its blocks (Step.after), the collection lands on no sample.
 */
export const collectGarbage: () => void = (() => {
  v8.setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  return () => gc();
})();
