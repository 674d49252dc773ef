/**
 * The alternative to our `tool_search_code` that section 6 measures in the same rounds: seed
 * 004's own design, a short-lived Node child per call. Per call: spawn `node --permission -e
 * <runtime + body>` (Node 22's permission model with no fs, net, child-process or worker grants,
 * an empty environment), the child's only globals for the body being `openclaw.tools.search /
 * describe / call` and `console.*`, bridged over newline-delimited JSON on stdin/stdout to this
 * process, which answers from an in-process copy of the same catalog with the repo's own search
 * and executor (bench/toolsearch-host.ts, bundled for Node with esbuild once, outside any timing,
 * as baselines.ts compiles the engine once). The parent kills the child at a wall-clock timeout.
 * A sample is spawn → the body's result back in this process (the child's exit is awaited after
 * the clock stops, before the next sample).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { trackPlain, untrackPlain } from "./supervise.ts";
import type { ChildProcess } from "node:child_process";

interface BridgeAnswer {
  ok: boolean;
  value?: unknown;
  message?: string;
}

interface Host {
  size: number;
  handle(op: string, args: unknown[]): Promise<BridgeAnswer>;
}

/** Bundle bench/toolsearch-host.ts for Node into `outDir` and load it; resolves to a host over `size` tools. */
export async function loadToolSearchHost(root: string, outDir: string, size: number): Promise<Host> {
  const esbuild = await import("esbuild");
  const outfile = path.join(outDir, "toolsearch-host.mjs");
  await esbuild.build({
    entryPoints: [path.join(root, "bench", "toolsearch-host.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile,
    logLevel: "warning",
  });
  const mod = (await import(pathToFileURL(outfile).href)) as { createToolSearchHost(size: number): Host };
  return mod.createToolSearchHost(size);
}

/** The child's runtime: the bridge over stdio, console as messages, the body as an async function. */
function childProgram(body: string): string {
  return `"use strict";
{
  const pending = new Map();
  let next = 0;
  let buffer = "";
  const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    buffer += chunk;
    for (let i = buffer.indexOf("\\n"); i >= 0; i = buffer.indexOf("\\n")) {
      const m = JSON.parse(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
      const p = pending.get(m.id);
      if (!p) continue;
      pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(m.message));
    }
  });
  const bridge = (op) => (...args) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      send({ t: "call", id, op, args });
    });
  const openclaw = Object.freeze({ tools: Object.freeze({ search: bridge("search"), describe: bridge("describe"), call: bridge("call") }) });
  const log = (level) => (...a) => send({ t: "log", level, text: a.map(String).join(" ") });
  const guestConsole = Object.freeze({ log: log("log"), warn: log("warn"), error: log("error") });
  const finish = (m) => process.stdout.write(JSON.stringify(m) + "\\n", () => process.exit(0));
  (async function (openclaw, console) {
${body}
  })(openclaw, guestConsole).then(
    (value) => finish({ t: "done", ok: true, value: value === undefined ? null : value }),
    (error) => finish({ t: "done", ok: false, message: String((error && error.message) || error) }),
  );
}
`;
}

/**
 * One `node --permission` child per call; resolves to the wall time from spawn to the body's
 * result (ms), after checking it. The child is SIGKILLed at `timeoutMs`.
 */
export function nodeChildToolSearch(host: Host, body: string, check: (value: unknown) => void, timeoutMs: number): () => Promise<number> {
  const program = childProgram(body);
  return () =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const child: ChildProcess = spawn(process.execPath, ["--permission", "-e", program], { env: {}, stdio: ["pipe", "pipe", "pipe"] });
      trackPlain(child);
      let result: { ms: number; message: Record<string, unknown> } | null = null;
      let buffer = "";
      let err = "";
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const onMessage = (m: Record<string, unknown>) => {
        if (m.t === "call") {
          host.handle(String(m.op), Array.isArray(m.args) ? m.args : []).then(
            (answer) => child.stdin?.write(JSON.stringify({ id: m.id, ...answer }) + "\n"),
            (error: unknown) => child.stdin?.write(JSON.stringify({ id: m.id, ok: false, message: String(error) }) + "\n"),
          );
        } else if (m.t === "done" && result === null) {
          result = { ms: performance.now() - t0, message: m };
        }
      };
      child.stdout?.on("data", (d: unknown) => {
        buffer += String(d);
        for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
          const line = buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
          try {
            onMessage(JSON.parse(line));
          } catch (error) {
            err += `bad line ${JSON.stringify(line.slice(0, 200))}: ${String(error)}\n`;
          }
        }
      });
      child.stderr?.on("data", (d: unknown) => (err += String(d)));
      child.stdin?.on("error", () => {}); // the child may exit before our last write lands
      child.on("error", (e: Error) => {
        clearTimeout(timer);
        untrackPlain(child);
        reject(e);
      });
      child.on("close", (code: number | null, signal: string | null) => {
        clearTimeout(timer);
        untrackPlain(child);
        if (result === null) return reject(new Error(`node --permission child: exit ${code ?? signal} without a result; ${err.slice(0, 500)}`));
        if (result.message.ok !== true) return reject(new Error(`node --permission child: body failed: ${String(result.message.message)}`));
        try {
          check(result.message.value);
        } catch (error) {
          return reject(error);
        }
        resolve(result.ms);
      });
    });
}
