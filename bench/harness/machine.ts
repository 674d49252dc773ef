/**
 * Facts about the machine a run happened on, for the report header: CPU, memory, OS, the load
 * (read from /proc/loadavg at the start and the end of the run; os.loadavg() where there is no
 * /proc), and the versions of workerd, wrangler and Node that produced the figures.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Load, Machine } from "./report.ts";

export function readLoad(): Load {
  try {
    // "0.52 0.58 0.59 2/321 12345": three averages, runnable/total entities, last pid.
    const [one, five, fifteen, entities] = String(fs.readFileSync("/proc/loadavg", "utf8")).trim().split(/\s+/);
    const [runnable, total] = (entities ?? "").split("/").map(Number);
    return { one: Number(one), five: Number(five), fifteen: Number(fifteen), runnable: runnable ?? null, entities: total ?? null };
  } catch {
    const [one, five, fifteen] = os.loadavg() as number[];
    return { one: one!, five: five!, fifteen: fifteen!, runnable: null, entities: null };
  }
}

function version(dir: string): string | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

export function describeMachine(root: string, loadStart: Load, extra: Pick<Machine, "quick" | "partial" | "elapsedS">): Machine {
  const cpus = os.cpus() as Array<{ model?: string }>;
  // The workerd that wrangler's Miniflare runs (nested under wrangler when versions differ).
  const workerd =
    version(path.join(root, "node_modules", "wrangler", "node_modules", "workerd")) ?? version(path.join(root, "node_modules", "workerd")) ?? "?";
  return {
    date: new Date().toISOString(),
    cpus: cpus.length,
    cpuModel: cpus[0]?.model?.trim() ?? "unknown CPU",
    memGiB: os.totalmem() / 2 ** 30,
    os: `${os.platform()} ${os.release()}`,
    loadStart,
    loadEnd: readLoad(),
    workerd,
    wrangler: version(path.join(root, "node_modules", "wrangler")) ?? "?",
    node: process.versions.node,
    ...extra,
  };
}
