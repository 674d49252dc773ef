/**
 * Section 9c: Swarm fan-out (issue 27). On the production build (src/index.ts lists swarmPlugin;
 * Swarm on by default), one `/chat` whose model calls `exec` once with a cell running
 * `agents.run([...])` over `children` tasks; each child is its own `/chat` turn in its own session
 * object, and its model answers text. Baseline in the same rounds: `children` child-like `/chat`
 * turns (a fresh session each, one model call answering text) one after another. The fake provider
 * holds every model request `latencyMs` before answering, so what shows is whether the children
 * wait on the provider side by side (≈ one child's time) or in turn (`children`× one).
 *
 * Every answer is checked: the parent completed with its final text after its cell saw every child
 * `completed` with its own text, and `meta.subAgents` lists them all completed; every sequential
 * turn completed with its text.
 */
import { CHAT_MODEL } from "./chat-task.ts";
import type { FakeProvider } from "./fake-provider.ts";
import { getJson, type Gateway } from "./http.ts";
import type { Plan } from "./options.ts";
import { runRounds } from "./rounds.ts";
import { pooled, roundRatios, summarize, type RoundSamples, type Summary } from "./stats.ts";

export interface SwarmFigures {
  plan: Plan["swarm"];
  measures: {
    /** The parent's whole `/chat` (two model calls of its own, the fan-out between them), ms. */
    fanout: Summary;
    /** The parent's `exec` cell alone, as its trajectory timed it: the fan-out proper, ms. */
    cell: Summary;
    /** `children` turns one after another, ms. */
    sequential: Summary;
    /** One of those turns (sequential ÷ children, per round), ms. */
    oneChild: Summary;
  };
  /** Per round: the cell ÷ one child turn, the whole parent ÷ one child turn, the cell ÷ the sequential turns. */
  ratios: { cellVsChild: Summary; fanoutVsChild: Summary; cellVsSequential: Summary };
  samples: { fanout: RoundSamples; sequential: RoundSamples; cell: number[] };
}

const FINAL_TEXT = "All sub-agents answered.";
const childText = (i: number) => `child ${i} done`;

/** The parent's cell: fan out, then throw (a failed exec, caught below) unless every child answered its own text. */
function fanoutCell(tasks: Array<{ prompt: string; label: string }>): string {
  return [
    `const rs = await agents.run(${JSON.stringify(tasks)});`,
    `const bad = rs.filter((r, i) => r.status !== "completed" || r.text !== "child " + i + " done");`,
    `if (rs.length !== ${tasks.length} || bad.length > 0) throw new Error("children: " + JSON.stringify(bad.map((r) => [r.label, r.status, r.error])));`,
    "return rs.length;",
  ].join("\n");
}

const fail = (what: string, r: { status: number; json: unknown }): never => {
  throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json).slice(0, 800)}`);
};

export async function measureSwarm(gw: Gateway, provider: FakeProvider, plan: Plan["swarm"], log: (msg: string) => void): Promise<SwarmFigures> {
  const n = plan.children;
  log(
    `[9c] swarm: a ${n}-way agents.run fan-out in one /chat against ${n} child-like /chat turns one after another; provider latency ${plan.latencyMs} ms`,
  );
  const tag = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  let seq = 0;
  const chat = (session: string, marker: string, text: string) =>
    getJson(
      `${gw.base}/v1/sessions/${session}/chat`,
      {
        method: "POST",
        headers: gw.headers,
        body: JSON.stringify({ model: CHAT_MODEL.openai, messages: [{ role: "user", content: `${marker} ${text}` }] }),
      },
      gw.timeoutMs,
    );
  const cells: number[] = [];

  const fanout = async (): Promise<number> => {
    const session = `swarm-${tag}-${seq++}`;
    const children = await Promise.all(Array.from({ length: n }, (_, i) => provider.script([{ text: childText(i) }])));
    const tasks = children.map((c, i) => ({ prompt: `${c.marker} Answer for item ${i}.`, label: `item-${i}` }));
    const parent = await provider.script([
      { toolCalls: [{ id: "call_swarm1", name: "exec", input: { code: fanoutCell(tasks) } }] },
      { text: FINAL_TEXT },
    ]);
    const t0 = performance.now();
    const r = await chat(session, parent.marker, "Fan out over the items.");
    const ms = performance.now() - t0;
    const sub = r.json?.meta?.subAgents;
    const ok =
      r.status === 200 &&
      r.json.status === "completed" &&
      r.json.message?.content === FINAL_TEXT &&
      r.json.meta?.toolSummary?.calls === 1 &&
      r.json.meta?.toolSummary?.failures === 0 &&
      sub?.count === n &&
      Array.isArray(sub.children) &&
      sub.children.length === n &&
      sub.children.every((c: { status?: string }) => c.status === "completed");
    if (!ok) fail("swarm fan-out /chat", r);
    const turns = `${gw.base}/v1/sessions/${session}/turns`;
    const t = await getJson(`${turns}/${r.json.turnId}/trajectory`, { headers: gw.headers }, gw.timeoutMs);
    const exec = (t.json?.calls ?? []).find((c: { tool?: string; name?: string }) => (c.tool ?? c.name) === "exec");
    if (t.status !== 200 || typeof exec?.durationMs !== "number") fail("swarm fan-out trajectory", t);
    cells.push(exec.durationMs);
    await Promise.all([parent, ...children].map((s) => provider.forget(s.id)));
    const del = await getJson(`${turns}/${r.json.turnId}`, { method: "DELETE", headers: gw.headers }, gw.timeoutMs);
    if (del.status !== 200) fail("delete swarm turn", del);
    return ms;
  };

  const sequential = async (): Promise<number> => {
    const round = seq++;
    const scripts = await Promise.all(Array.from({ length: n }, (_, i) => provider.script([{ text: childText(i) }])));
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const r = await chat(`swarm-seq-${tag}-${round}-${i}`, scripts[i]!.marker, `Answer for item ${i}.`);
      if (r.status !== 200 || r.json.status !== "completed" || r.json.message?.content !== childText(i) || r.json.meta?.assistantTurns !== 1)
        fail(`sequential turn ${i}`, r);
    }
    const ms = performance.now() - t0;
    await Promise.all(scripts.map((s) => provider.forget(s.id)));
    return ms;
  };

  const r = await runRounds(
    plan.rounds,
    [
      { name: "fanout", perRound: 1, warmup: plan.warmup, run: fanout },
      { name: "sequential", perRound: 1, warmup: plan.warmup, run: sequential },
    ],
    (round) => log(`[9c] swarm: round ${round + 1}/${plan.rounds}`),
  );
  // The warm-up's fan-outs also timed a cell: keep the timed rounds' only.
  const timedCells = cells.slice(cells.length - plan.rounds);
  const cellRounds: RoundSamples = timedCells.map((v) => [v]);
  const oneChild: RoundSamples = r.sequential.map((s) => s.map((v) => v / n));
  return {
    plan,
    measures: { fanout: pooled(r.fanout), cell: summarize(timedCells), sequential: pooled(r.sequential), oneChild: pooled(oneChild) },
    ratios: {
      cellVsChild: roundRatios(cellRounds, oneChild),
      fanoutVsChild: roundRatios(r.fanout, oneChild),
      cellVsSequential: roundRatios(cellRounds, r.sequential),
    },
    samples: { fanout: r.fanout, sequential: r.sequential, cell: timedCells },
  };
}
