/**
 * The workerd process that `start` brings up (Linux /proc): the experiments read its CPU counters.
 * Found as the workerd that was not running before, whoever its parent (Miniflare in this process,
 * or a serve child).
 */
import fs from "node:fs";

function workerdPids(): Set<number> {
  const out = new Set<number>();
  for (const p of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (fs.readFileSync(`/proc/${p}/stat`, "utf8").includes("(workerd)")) out.add(Number(p));
    } catch {
      // gone
    }
  }
  return out;
}

export async function startedWorkerd<T>(start: () => Promise<T>): Promise<{ started: T; pid: number }> {
  const before = workerdPids();
  const started = await start();
  const pid = [...workerdPids()].find((p) => !before.has(p));
  if (pid === undefined) throw new Error("workerd process not found");
  return { started, pid };
}
