/**
 * Supervision of everything the bench starts: every child is registered here and killed when
 * the run ends, however it ends (normal exit, error, signal, or the watchdog that stops a run
 * past its time limit). Wrangler and workerd run in their own process group (killed as a
 * group); `node -e` baseline cells are plain children. Also owns the run's temporary directory
 * (bundles), removed on exit; leftovers of runs killed with SIGKILL are swept at start.
 *
 * The node:* imports are untyped here (no @types/node in this project; see node.d.ts).
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const TMP_PREFIX = "codemode-bench-";

/** Process-group leaders (wrangler, serve.mjs → workerd): killed with their whole group. */
const groups = new Set<ChildProcess>();
/** Plain children (the `node -e` baseline). */
const plain = new Set<ChildProcess>();
let tmpRoot: string | null = null;

export function trackGroup(child: ChildProcess): void {
  groups.add(child);
}

export function untrackGroup(child: ChildProcess): void {
  groups.delete(child);
}

export function trackPlain(child: ChildProcess): void {
  plain.add(child);
}

export function untrackPlain(child: ChildProcess): void {
  plain.delete(child);
}

/** SIGKILL a process group led by `child` (no-op if already gone). */
export function killGroup(child: ChildProcess, signal: "SIGTERM" | "SIGKILL" = "SIGKILL"): void {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function killAllNow(): void {
  for (const child of groups) killGroup(child);
  groups.clear();
  for (const child of plain) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  plain.clear();
}

/**
 * Install the exit, signal and watchdog handlers, sweep stale temp dirs, and create this run's.
 * Call once, first.
 */
export function superviseRun(watchdogMs: number): { tmpRoot: string } {
  for (const d of fs.readdirSync(os.tmpdir()) as string[]) {
    if (!d.startsWith(TMP_PREFIX)) continue;
    try {
      const full = path.join(os.tmpdir(), d);
      if (Date.now() - fs.statSync(full).mtimeMs > 15 * 60_000) fs.rmSync(full, { recursive: true, force: true });
    } catch {
      // not ours to worry about
    }
  }
  const root: string = fs.mkdtempSync(path.join(os.tmpdir(), TMP_PREFIX));
  tmpRoot = root;
  process.on("exit", () => {
    killAllNow();
    try {
      if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true });
    } catch {
      // best effort
    }
  });
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      console.error(`\nbench: ${sig}, stopping children`);
      process.exit(130);
    });
  }
  const watchdog = setTimeout(() => {
    console.error(`bench: watchdog: still running after ${watchdogMs / 1000} s, giving up`);
    process.exit(2);
  }, watchdogMs);
  (watchdog as unknown as { unref(): void }).unref();
  return { tmpRoot: root };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Environment for wrangler and workerd: no telemetry, no colours in the output we parse. */
export function wranglerEnv(): Record<string, string | undefined> {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" };
}

/** Keep the last lines of a child's output for error reports. */
export function tail(child: ChildProcess, limit = 60): () => string {
  const lines: string[] = [];
  const push = (chunk: unknown) => {
    for (const line of String(chunk).split("\n")) {
      if (line.trim() === "") continue;
      lines.push(line);
      if (lines.length > limit) lines.shift();
    }
  };
  child.stdout?.on("data", push);
  child.stderr?.on("data", push);
  return () => lines.join("\n");
}
