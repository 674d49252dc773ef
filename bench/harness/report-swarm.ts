/**
 * Report, section 9c: a Swarm fan-out against the same sub-agent turns one after another. Pure.
 */
import type { SwarmFigures } from "./measure-swarm.ts";
import { factor, ms, table } from "./report-format.ts";
import type { Summary } from "./stats.ts";

/** The goal line: the fan-out's cell takes at most this many child turns (issue 27: ≈ one child's time). */
export const SWARM_LINE = 2;

const row = (what: string, s: Summary): string[] => [what, ms(s.median), `${ms(s.q1)}–${ms(s.q3)}`, `${ms(s.min)}–${ms(s.max)}`];

export function reportSwarm(f: SwarmFigures): string[] {
  const p = f.plan;
  const m = f.measures;
  return [
    "## 9c. Swarm: a fan-out of sub-agents against the same turns one after another",
    "",
    `One \`/chat\` on the production build whose model calls \`exec\` once with a cell running \`agents.run([...])\` over ${p.children} tasks;`,
    `each sub-agent is its own \`/chat\` turn in its own session object (all in the one isolate the local workerd runs), whose model`,
    `answers text. Baseline in the same rounds: ${p.children} child-like \`/chat\` turns (a fresh session each, one model call) one after`,
    `another. The fake provider (this process) holds every model request ${p.latencyMs} ms before answering. Every answer is checked: the`,
    `cell saw all ${p.children} children \`completed\` with their own text, \`meta.subAgents\` lists them all completed, each sequential turn`,
    `answered its text. "The cell" is the parent's \`exec\` as its trajectory timed it (the fan-out proper); the whole \`/chat\` adds the`,
    `parent's own two model calls. Rounds: ${p.rounds} (one sample of each per round, order reversing every round), after ${p.warmup} untimed of each.`,
    "",
    ...table(
      ["measure", "median (ms)", "IQR (ms)", "min–max (ms)"],
      [
        row(`**baseline**: ${p.children} child turns one after another`, m.sequential),
        row("one child turn (that ÷ " + p.children + ")", m.oneChild),
        row(`the fan-out's cell (${p.children} sub-agents)`, m.cell),
        row("the parent's whole `/chat` (cell + two model calls)", m.fanout),
      ],
    ),
    "",
    `Per round: the cell ÷ one child turn ${factor(f.ratios.cellVsChild)} (goal ≤ ${SWARM_LINE}×; one after another would be ≈ ${p.children}×); the whole`,
    `parent ÷ one child turn ${factor(f.ratios.fanoutVsChild)}; the cell ÷ the ${p.children} sequential turns ${factor(f.ratios.cellVsSequential)}.`,
    "",
  ];
}
