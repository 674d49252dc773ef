/**
 * Section 8: `POST /v1/sessions/:sessionId/chat` on the bench worker's gateway, with the fake
 * provider server in this process (fake-provider.ts) and the 300-tool MCP server attached per chat
 * (`mcpServers`, as a user attaches their own), running the scripted task of chat-task.ts.
 *
 *   1. Prompt bytes and model round trips of the task, code mode against direct exposure, on both
 *      wire formats (chat-bytes.ts).
 *   2. Gateway overhead per assistant turn: per `/chat` call, (wall time − the provider's time) ÷
 *      assistant turns, the provider's time taken at the fake server per request (arrival → end of
 *      its answer). Split with the turn's trajectory (model calls and outer tool calls as the session
 *      object timed them) and the MCP server's own time (bench/mcp-tools-server.mjs `/__timings`).
 *      Against a floor: a plain Worker replaying the same request bodies to the same fake provider,
 *      one per turn, timing each call on the same clock (chat-calls.ts). Interleaved rounds.
 *   3. The marginal model round trip (the long task less the task, ÷ its extra round trips), the
 *      gateway's against the plain Worker's and against the durable floor's: the same replay in a
 *      Durable Object that stores each answer before its next call (what the platform charges any
 *      chat endpoint that keeps its rounds: the commit the next request waits for).
 */
import { bytesOf, type ChatBytes } from "./chat-bytes.ts";
import { chatOnce, floorOnce, openOnce, sum, type ChatDeps, type ChatSample, type RecordedBodies } from "./chat-calls.ts";
import { CHAT_SURFACES, CHAT_WIRES, roundTrips, type ChatSurface } from "./chat-task.ts";
import type { FakeRecord } from "./fake-provider.ts";
import type { Plan } from "./options.ts";
import { runRounds, type Step } from "./rounds.ts";
import { perRound, pooled, roundDifferences, roundMedians, roundRatios, summarize, type RoundSamples, type Summary } from "./stats.ts";

export const CHAT_MEASURES = ["chatCode", "chatDirect", "floorCode", "floorDirect"] as const;
export type ChatMeasure = (typeof CHAT_MEASURES)[number];
export const SURFACE_OF: Record<ChatMeasure, ChatSurface> = {
  chatCode: "codeMode",
  chatDirect: "direct",
  floorCode: "codeMode",
  floorDirect: "direct",
};

export const CHAT_METRICS = [
  "wall",
  "provider",
  "mcp",
  "gateway",
  "modelCalls",
  "tools",
  "rest",
  "perTurn",
  "ownPerTurn",
  "roundTrip",
  "ownLessTools",
] as const;
export type ChatMetric = (typeof CHAT_METRICS)[number];

/** Per sample (ms). `perTurn` is the overhead the issue asks for; the others split it. */
const METRIC: Record<ChatMetric, (s: ChatSample) => number> = {
  wall: (s) => s.wallMs,
  provider: (s) => sum(s.providerCalls),
  mcp: (s) => s.mcpMs,
  /** What is left once the provider and the MCP server are taken out: the gateway's own time. */
  gateway: (s) => s.wallMs - sum(s.providerCalls) - s.mcpMs,
  /** Model calls as the isolate timed them, less the provider's time. */
  modelCalls: (s) => sum(s.modelCalls) - sum(s.providerCalls),
  tools: (s) => s.toolsMs,
  /** HTTP edge, session object, turn opening (the MCP listing), the answer: all but model and tool calls. */
  rest: (s) => s.wallMs - sum(s.modelCalls) - s.toolsMs,
  /** (wall − provider) ÷ assistant turns. */
  perTurn: (s) => (s.wallMs - sum(s.providerCalls)) / s.turns,
  /** The gateway's own time ÷ assistant turns. */
  ownPerTurn: (s) => (s.wallMs - sum(s.providerCalls) - s.mcpMs) / s.turns,
  /** (model calls − provider) ÷ assistant turns: one model round trip's cost in the isolate. */
  roundTrip: (s) => (sum(s.modelCalls) - sum(s.providerCalls)) / s.turns,
  /** The gateway's own time less its outer tool calls (cells): opening, model round trips, the answer. */
  ownLessTools: (s) => s.wallMs - sum(s.providerCalls) - s.mcpMs - s.toolsMs,
};

type StepName = ChatMeasure | "open" | "long" | "floorLong" | "durable" | "durableLong";

/** Extra model round trips of the long code-mode task (chat-task.ts `taskSteps`' `extra`). */
export const EXTRA_ROUND_TRIPS = 12;

/** A metric over every sample, and over the per-round medians. */
export interface MetricFigures {
  pooled: Summary;
  rounds: Summary;
}

export interface ChatFigures {
  plan: Plan["chat"];
  bytes: ChatBytes[];
  measures: Record<ChatMeasure, Record<ChatMetric, MetricFigures>>;
  /** Per model call k (in order), over all samples: isolate time less the provider's time, and the provider's. */
  perCall: Record<ChatMeasure, Array<{ gateway: Summary; provider: Summary }>>;
  /** Per round, against the floor with the same bodies (its per-turn time): ratios, and differences in ms. */
  vsFloor: Record<ChatSurface, { perTurn: Summary; ownPerTurn: Summary; ownPerTurnOver: Summary; roundTripOver: Summary }>;
  /**
   * The marginal model round trip, code mode: per round, (the long task's − the task's) gateway time
   * less tool time (wall − provider − MCP server − outer tool calls), ÷ the extra round trips; the
   * plain Worker's marginal call the same way (its replay of the long task's bodies less its replay
   * of the task's, ÷ the extra calls: no HTTP edge in it either); and the first less the second
   * (`over`). No turn opening in them.
   */
  marginal: {
    extra: number;
    perRoundTrip: Summary;
    floorPerCall: Summary;
    over: Summary;
    /** The durable floor's marginal call (same bodies, each answer stored first); the gateway over it; it over the plain Worker. */
    durablePerCall: Summary;
    overDurable: Summary;
    durableOverFloor: Summary;
  };
  /** Per round, code mode ÷ direct: the whole call, the gateway's own time, per turn. */
  codeVsDirect: { wall: Summary; gateway: Summary; perTurn: Summary };
  /**
   * Opening code mode's turn alone (`POST …/turns`), per-round medians: wall, the MCP server's part,
   * and the gateway's own (wall less the MCP server, per call: HTTP edge, session object, catalog, stored turn).
   */
  open: { wall: MetricFigures; mcp: MetricFigures; own: MetricFigures };
  /** MCP server requests per call over the timed calls. */
  mcpRequests: Record<ChatSurface, Summary>;
  /** promptBytes over the timed calls (the marker's length and the exec result's durations move it by a few bytes). */
  timedPromptBytes: Record<ChatSurface, Summary>;
}

export async function measureChat(d: ChatDeps, plan: Plan["chat"], log: (msg: string) => void): Promise<ChatFigures> {
  const tag = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const sessions: Record<ChatSurface, string> = { codeMode: `chat-code-${tag}`, direct: `chat-direct-${tag}` };

  // 1. Bytes: once per wire format and surface, every request checked; the timing wire's bodies kept for the floor.
  const bytes: ChatBytes[] = [];
  const floorBodies = {} as Record<ChatSurface, RecordedBodies>;
  for (const wire of CHAT_WIRES) {
    for (const surface of CHAT_SURFACES) {
      let records: FakeRecord[] = [];
      const once = await chatOnce(d, sessions[surface], surface, wire, (r) => (records = r));
      bytes.push(bytesOf(wire, surface, once.answer, records, once.contentLength));
      if (wire === plan.wire) {
        const marker = /\[script:[A-Za-z0-9_-]+\]/.exec(JSON.stringify(records[0]!.body))![0];
        floorBodies[surface] = { marker, bodies: records.map((r) => JSON.stringify(r.body)) };
      }
    }
  }
  log(`[8] chat: prompt bytes ${bytes.map((b) => `${b.wire}/${b.surface} ${b.promptBytes} B in ${b.roundTrips}`).join(", ")}`);
  // The long task's bodies, for the plain Worker's own marginal round trip.
  let longRecords: FakeRecord[] = [];
  await chatOnce(d, sessions.codeMode, "codeMode", plan.wire, (r) => (longRecords = r), EXTRA_ROUND_TRIPS);
  const longMarker = /\[script:[A-Za-z0-9_-]+\]/.exec(JSON.stringify(longRecords[0]!.body))![0];
  const floorLongBodies: RecordedBodies = { marker: longMarker, bodies: longRecords.map((r) => JSON.stringify(r.body)) };

  // 2. Overhead: four measures in interleaved rounds; samples kept only after the warm-up.
  const samples = Object.fromEntries(CHAT_MEASURES.map((m) => [m, [] as ChatSample[]])) as Record<ChatMeasure, ChatSample[]>;
  const opens: Array<{ wallMs: number; mcpMs: number }> = [];
  const longs: ChatSample[] = [];
  let timing = false;
  const step = (m: ChatMeasure): Step<StepName> => ({
    name: m,
    perRound: plan.perRound,
    warmup: plan.warmup,
    run: async () => {
      const surface = SURFACE_OF[m];
      const s = m.startsWith("chat")
        ? (await chatOnce(d, sessions[surface], surface, plan.wire)).sample
        : await floorOnce(d, surface, plan.wire, floorBodies[surface]);
      if (s.turns !== roundTrips(surface) || s.providerCalls.length !== s.turns || s.modelCalls.length !== s.turns)
        throw new Error(`${m}: ${s.turns} turns, ${s.providerCalls.length} provider requests, ${s.modelCalls.length} model calls`);
      if (timing) samples[m].push(s);
      return s.wallMs;
    },
  });
  const open: Step<StepName> = {
    name: "open",
    perRound: plan.perRound,
    warmup: plan.warmup,
    run: async () => {
      const o = await openOnce(d, sessions.codeMode, "codeMode");
      if (timing) opens.push(o);
      return o.wallMs;
    },
  };
  const long: Step<StepName> = {
    name: "long",
    perRound: plan.perRound,
    warmup: plan.warmup,
    run: async () => {
      const s = (await chatOnce(d, sessions.codeMode, "codeMode", plan.wire, undefined, EXTRA_ROUND_TRIPS)).sample;
      if (s.turns !== roundTrips("codeMode", EXTRA_ROUND_TRIPS)) throw new Error(`long code-mode task: ${s.turns} turns`);
      if (timing) longs.push(s);
      return s.wallMs;
    },
  };
  // The floors' replays of the long task (and the durable floor's of the task): each a step of its own.
  const replays = { floorLong: [] as ChatSample[], durable: [] as ChatSample[], durableLong: [] as ChatSample[] };
  const replay = (name: keyof typeof replays, extra: number, store: boolean): Step<StepName> => ({
    name,
    perRound: plan.perRound,
    warmup: plan.warmup,
    run: async () => {
      const s = await floorOnce(d, "codeMode", plan.wire, extra ? floorLongBodies : floorBodies.codeMode, extra, store);
      if (s.turns !== roundTrips("codeMode", extra)) throw new Error(`${name}: ${s.turns} calls`);
      if (timing) replays[name].push(s);
      return s.wallMs;
    },
  });
  const steps: Array<Step<StepName>> = [
    ...CHAT_MEASURES.map(step),
    open,
    long,
    replay("floorLong", EXTRA_ROUND_TRIPS, false),
    replay("durable", 0, true),
    replay("durableLong", EXTRA_ROUND_TRIPS, true),
  ];
  log(
    `[8] chat: warm-up, then ${plan.rounds} interleaved rounds of /chat (code mode, direct, code mode with ${EXTRA_ROUND_TRIPS} more round trips), the plain-Worker and durable floors (same bodies) and the turn opening alone`,
  );
  for (const s of steps) for (let i = 0; i < s.warmup; i++) await s.run();
  timing = true;
  // One sample of each measure in turn: each marginal round trip is a difference of samples taken side by side.
  await runRounds(
    plan.rounds,
    steps.map((s) => ({ ...s, warmup: 0 })),
    undefined,
    { alternate: true },
  );
  log(
    `[8] chat: ${CHAT_MEASURES.map((m) => `${samples[m].length} ${m}`).join(", ")}, ${longs.length} long, ${replays.floorLong.length} plain-Worker long, ${replays.durable.length}+${replays.durableLong.length} durable, ${opens.length} open — all verified`,
  );
  return figures(plan, bytes, samples, opens, longs, replays);
}

function figures(
  plan: Plan["chat"],
  bytes: ChatBytes[],
  samples: Record<ChatMeasure, ChatSample[]>,
  opens: Array<{ wallMs: number; mcpMs: number }>,
  longs: ChatSample[],
  replays: { floorLong: ChatSample[]; durable: ChatSample[]; durableLong: ChatSample[] },
): ChatFigures {
  const openRounds = (f: (o: { wallMs: number; mcpMs: number }) => number): MetricFigures => {
    const rounds = Array.from({ length: plan.rounds }, (_, r) => opens.slice(r * plan.perRound, (r + 1) * plan.perRound).map(f));
    return { pooled: pooled(rounds), rounds: summarize(roundMedians(rounds)) };
  };
  const byRound = (m: ChatMeasure, metric: ChatMetric): RoundSamples =>
    Array.from({ length: plan.rounds }, (_, r) => samples[m].slice(r * plan.perRound, (r + 1) * plan.perRound).map(METRIC[metric]));
  const metrics = (m: ChatMeasure) =>
    Object.fromEntries(CHAT_METRICS.map((k) => [k, { pooled: pooled(byRound(m, k)), rounds: summarize(roundMedians(byRound(m, k))) }])) as Record<
      ChatMetric,
      MetricFigures
    >;
  const perCall = (m: ChatMeasure) =>
    Array.from({ length: roundTrips(SURFACE_OF[m]) }, (_, k) => ({
      gateway: summarize(samples[m].map((s) => s.modelCalls[k]! - s.providerCalls[k]!)),
      provider: summarize(samples[m].map((s) => s.providerCalls[k]!)),
    }));
  const vsFloor = (chat: ChatMeasure, floor: ChatMeasure) => ({
    perTurn: roundRatios(byRound(chat, "perTurn"), byRound(floor, "perTurn")),
    ownPerTurn: roundRatios(byRound(chat, "ownPerTurn"), byRound(floor, "perTurn")),
    ownPerTurnOver: roundDifferences(byRound(chat, "ownPerTurn"), byRound(floor, "perTurn")),
    roundTripOver: roundDifferences(byRound(chat, "roundTrip"), byRound(floor, "roundTrip")),
  });
  const ownByRound = (xs: ChatSample[]): RoundSamples =>
    Array.from({ length: plan.rounds }, (_, r) => xs.slice(r * plan.perRound, (r + 1) * plan.perRound).map(METRIC.ownLessTools));
  const marginalOf = (long: RoundSamples, task: RoundSamples) => perRound(long, task, (l, t) => (l - t) / EXTRA_ROUND_TRIPS);
  const perRoundTrip = marginalOf(ownByRound(longs), byRound("chatCode", "ownLessTools"));
  // The floors' marginal calls the same way: a long replay less its short one, ÷ the extra calls.
  const floorPerCall = marginalOf(ownByRound(replays.floorLong), byRound("floorCode", "ownLessTools"));
  const durablePerCall = marginalOf(ownByRound(replays.durableLong), ownByRound(replays.durable));
  return {
    plan,
    bytes,
    marginal: {
      extra: EXTRA_ROUND_TRIPS,
      perRoundTrip: summarize(perRoundTrip),
      floorPerCall: summarize(floorPerCall),
      over: summarize(perRoundTrip.map((v, r) => v - floorPerCall[r]!)),
      durablePerCall: summarize(durablePerCall),
      overDurable: summarize(perRoundTrip.map((v, r) => v - durablePerCall[r]!)),
      durableOverFloor: summarize(durablePerCall.map((v, r) => v - floorPerCall[r]!)),
    },
    measures: Object.fromEntries(CHAT_MEASURES.map((m) => [m, metrics(m)])) as ChatFigures["measures"],
    perCall: Object.fromEntries(CHAT_MEASURES.map((m) => [m, perCall(m)])) as ChatFigures["perCall"],
    vsFloor: { codeMode: vsFloor("chatCode", "floorCode"), direct: vsFloor("chatDirect", "floorDirect") },
    codeVsDirect: {
      wall: roundRatios(byRound("chatCode", "wall"), byRound("chatDirect", "wall")),
      gateway: roundRatios(byRound("chatCode", "gateway"), byRound("chatDirect", "gateway")),
      perTurn: roundRatios(byRound("chatCode", "perTurn"), byRound("chatDirect", "perTurn")),
    },
    open: { wall: openRounds((o) => o.wallMs), mcp: openRounds((o) => o.mcpMs), own: openRounds((o) => o.wallMs - o.mcpMs) },
    mcpRequests: {
      codeMode: summarize(samples.chatCode.map((s) => s.mcpRequests)),
      direct: summarize(samples.chatDirect.map((s) => s.mcpRequests)),
    },
    timedPromptBytes: {
      codeMode: summarize(samples.chatCode.map((s) => s.promptBytes)),
      direct: summarize(samples.chatDirect.map((s) => s.promptBytes)),
    },
  };
}
