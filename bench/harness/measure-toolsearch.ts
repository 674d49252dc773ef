/**
 * Section 6: Tool Search (seed 004) over the bench worker's gateway, whose only plugin is the
 * 500-tool catalog of test/support/large-catalog.ts (bench/bench-worker.ts).
 *
 *   1. Model-visible payload: one turn per surface (direct tools, Tool Search `code`, Tool Search
 *      `tools`, code mode), the turn answer's `tools` serialized as JSON, in UTF-8 bytes, and the
 *      tool count. Deterministic (same catalog, same config), so one turn each.
 *   2. Latency of one `tool_search_code` call (search → describe → call of github_issue_create,
 *      HTTP → Worker → session Durable Object → QuickJS) against seed 004's design, a `node
 *      --permission` child per call (baselines-toolsearch.ts), in interleaved rounds (rounds.ts).
 *      Each of our calls also yields the session object's own duration of the cell from its
 *      `cell` log record (whole milliseconds), read from the server's output after the clock stops.
 */
import { loadToolSearchHost, nodeChildToolSearch } from "./baselines-toolsearch.ts";
import { getJson, timedTool, type Gateway, type JsonReply, type Turn } from "./http.ts";
import type { Plan } from "./options.ts";
import { runRounds, type Step } from "./rounds.ts";
import { pooled, roundMedians, roundRatios, summarize, type Summary } from "./stats.ts";

export const SURFACES = ["direct", "code", "tools", "codeMode"] as const;
export type SurfaceName = (typeof SURFACES)[number];

/** The agents of the bench gateway's CODEMODE_CONFIG, one per surface (code mode is the default). */
export function toolSearchConfig(plan: Plan["toolsearch"]): Record<string, unknown> {
  return {
    tools: { codeMode: true },
    agents: {
      entries: {
        direct: { tools: { codeMode: false, toolSearch: false } },
        search: { tools: { codeMode: false, toolSearch: { mode: "code", codeTimeoutMs: plan.codeTimeoutMs } } },
        searchtools: { tools: { codeMode: false, toolSearch: { mode: "tools" } } },
      },
    },
  };
}

const AGENT: Record<SurfaceName, string | undefined> = { direct: "direct", code: "search", tools: "searchtools", codeMode: undefined };

export interface SurfacePayload {
  tools: number;
  names: string[];
  bytes: number;
  /** The turn's own `telemetry.surface.bytes` (absent on code-mode turns, whose telemetry is the seed's). */
  telemetryBytes: number | null;
}

export const TS_MEASURES = ["ours", "node"] as const;
export type TsMeasure = (typeof TS_MEASURES)[number];

export interface ToolSearchFigures {
  plan: Plan["toolsearch"];
  catalogSize: number;
  payload: Record<SurfaceName, SurfacePayload>;
  measures: Record<TsMeasure, Summary>;
  /** Time ratio ours / node per round (below 1: ours faster). */
  ratio: Summary;
  roundMedians: Record<TsMeasure, number[]>;
  /** The session object's duration of each timed cell (`cell` log record, whole ms), or null if the records were not seen. */
  cellMs: Summary | null;
  /** How many timed cells had a `cell` record. */
  cellRecords: number;
}

const bytes = (v: unknown): number => new TextEncoder().encode(JSON.stringify(v)).length;

async function open(gw: Gateway, surface: SurfaceName): Promise<{ turn: Turn; session: string; json: any }> {
  const session = `ts-${surface}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const agent = AGENT[surface];
  const r = await getJson(
    `${gw.base}/v1/sessions/${session}/turns`,
    { method: "POST", headers: gw.headers, body: JSON.stringify(agent ? { agentId: agent } : {}) },
    gw.timeoutMs,
  );
  const j = r.json;
  const ok =
    r.status === 201 &&
    typeof j.turnId === "string" &&
    Array.isArray(j.tools) &&
    (surface === "codeMode"
      ? j.codeModeEngaged === true
      : j.codeModeEngaged === false && j.toolSearchEngaged === (surface !== "direct") && (surface === "direct" || j.toolSearchMode === surface));
  if (!ok) throw new Error(`open ${surface} turn: ${r.status} ${JSON.stringify(j).slice(0, 500)}`);
  const url = `${gw.base}/v1/sessions/${session}/turns/${j.turnId}`;
  return { turn: { tools: `${url}/tools`, url, session: `${gw.base}/v1/sessions/${session}` }, session, json: j };
}

const EXPECTED_NAMES: Record<Exclude<SurfaceName, "direct">, string[]> = {
  code: ["tool_search_code"],
  tools: ["tool_search", "tool_describe", "tool_call"],
  codeMode: ["exec", "wait"],
};

function payloadOf(surface: SurfaceName, json: any, catalogSize: number): SurfacePayload {
  const names: string[] = json.tools.map((t: { name: string }) => t.name);
  const expected = surface === "direct" ? null : EXPECTED_NAMES[surface];
  if (expected ? JSON.stringify([...names].sort()) !== JSON.stringify([...expected].sort()) : names.length !== catalogSize) {
    throw new Error(`${surface} surface: unexpected tools ${names.slice(0, 10).join(", ")} (${names.length})`);
  }
  const b = bytes(json.tools);
  const telemetryBytes = typeof json.telemetry?.surface?.bytes === "number" ? (json.telemetry.surface.bytes as number) : null;
  if (telemetryBytes !== null && telemetryBytes !== b)
    throw new Error(`${surface} surface: telemetry says ${telemetryBytes} bytes, the answer has ${b}`);
  return { tools: names.length, names: expected ? names : [], bytes: b, telemetryBytes };
}

function checkValue(title: string): (value: unknown) => void {
  return (value) => {
    const v = value as { number?: unknown; title?: unknown } | null;
    if (!v || v.title !== title || !Number.isInteger(v.number)) throw new Error(`tool_search_code returned ${JSON.stringify(value)}`);
  };
}

/** The last `cell` record of `session` in the server's recent output, if any. */
function lastCellMs(output: string, session: string): number | null {
  const lines = output.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.includes('"cell"') || !line.includes(session)) continue;
    try {
      const r = JSON.parse(line.slice(line.indexOf("{")));
      if (r.kind === "cell" && r.sessionId === session && typeof r.durationMs === "number") return r.durationMs as number;
    } catch {
      // not one of our records
    }
  }
  return null;
}

export async function measureToolSearch(
  gw: Gateway,
  plan: Plan["toolsearch"],
  paths: { root: string; tmpRoot: string },
  serverOutput: () => string,
  log: (msg: string) => void,
): Promise<ToolSearchFigures> {
  const payload = {} as Record<SurfaceName, SurfacePayload>;
  for (const s of SURFACES) payload[s] = payloadOf(s, (await open(gw, s)).json, plan.catalogSize);
  log(`[6] toolsearch: payload ${SURFACES.map((s) => `${s} ${payload[s].bytes} B / ${payload[s].tools} tools`).join(", ")}`);

  const host = await loadToolSearchHost(paths.root, paths.tmpRoot, plan.catalogSize);
  if (host.size !== plan.catalogSize) throw new Error(`node-child host: ${host.size} tools, expected ${plan.catalogSize}`);
  const search = await open(gw, "code");
  const check = checkValue(plan.expectedTitle);
  const cellMs: number[] = [];
  let timing = false;
  const ours = async () => {
    const r = await timedTool(gw, search.turn, "tool_search_code", { code: plan.code }, (reply: JsonReply) => {
      if (reply.status !== 200 || reply.json.status !== "completed")
        throw new Error(`tool_search_code: ${reply.status} ${JSON.stringify(reply.json).slice(0, 500)}`);
      check(reply.json.value);
    });
    if (timing) {
      const cell = lastCellMs(serverOutput(), search.session);
      if (cell !== null) cellMs.push(cell);
    }
    return r.ms;
  };
  const steps: Array<Step<TsMeasure>> = [
    { name: "ours", perRound: plan.oursPerRound, warmup: plan.warmup, run: ours },
    { name: "node", perRound: plan.nodePerRound, warmup: plan.nodeWarmup, run: nodeChildToolSearch(host, plan.code, check, plan.codeTimeoutMs) },
  ];
  log(`[6] toolsearch: warm-up, then ${plan.rounds} interleaved rounds of tool_search_code vs a node --permission child`);
  // Warm-up first (runRounds does it before round 0), with the cell records ignored until then.
  for (const step of steps) for (let i = 0; i < step.warmup; i++) await step.run();
  timing = true;
  const s = await runRounds(
    plan.rounds,
    steps.map((step) => ({ ...step, warmup: 0 })),
  );
  log(`[6] toolsearch: ${TS_MEASURES.map((m) => `${s[m].flat().length} ${m}`).join(", ")} — all verified; ${cellMs.length} cell records`);
  return {
    plan,
    catalogSize: plan.catalogSize,
    payload,
    measures: { ours: pooled(s.ours), node: pooled(s.node) },
    ratio: roundRatios(s.ours, s.node),
    roundMedians: { ours: roundMedians(s.ours), node: roundMedians(s.node) },
    cellMs: cellMs.length > 0 ? summarize(cellMs) : null,
    cellRecords: cellMs.length,
  };
}
