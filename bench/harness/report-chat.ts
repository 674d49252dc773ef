/**
 * Report, section 8: `/chat` running one scripted multi-tool task over the 300-tool MCP server:
 * prompt bytes and model round trips of code mode against direct exposure, and the gateway's time
 * per assistant turn against a plain Worker calling the same fake provider. Pure.
 */
import type { ChatBytes } from "./chat-bytes.ts";
import { EXEC_CODE, TASK_CALLS, type ChatSurface } from "./chat-task.ts";
import type { ChatFigures, ChatMeasure, ChatMetric } from "./measure-chat.ts";
import { factor, kib, ms, msSpread, ratio, table, xRange } from "./report-format.ts";
import type { Summary } from "./stats.ts";

const SURFACE_LABEL: Record<ChatSurface, string> = { codeMode: "code mode (`exec`, `wait`)", direct: "direct exposure (agent `direct`)" };
const WIRE_LABEL = { openai: "Chat Completions", anthropic: "Messages" } as const;
const MEASURE_LABEL: Record<ChatMeasure, string> = {
  chatCode: "`/chat`, code mode",
  chatDirect: "`/chat`, direct exposure",
  floorCode: "**baseline**: plain Worker, code mode's bodies",
  floorDirect: "**baseline**: plain Worker, direct's bodies",
};
const FLOOR_OF: Partial<Record<ChatMeasure, ChatSurface>> = { chatCode: "codeMode", chatDirect: "direct" };

const n = (v: number): string => v.toLocaleString("en-US");
const reqs = (s: Summary): string => (s.min === s.max ? `${s.min} requests` : `${s.min}–${s.max} requests`);
const bytesRange = (s: Summary): string => (s.min === s.max ? `${n(s.min)} B` : `${n(s.min)}–${n(s.max)} B`);

/** The goal-table line: "direct sends N× the prompt bytes of code mode … in 4 round trips vs 2". */
export function bytesVerdict(f: ChatFigures): string {
  const at = (s: ChatSurface) => f.bytes.find((b) => b.wire === f.plan.wire && b.surface === s)!;
  const [c, d] = [at("codeMode"), at("direct")];
  return `direct exposure sends ${ratio(d.promptBytes, c.promptBytes)} the prompt bytes of code mode (${n(d.promptBytes)} B vs ${n(c.promptBytes)} B on ${WIRE_LABEL[f.plan.wire]}) in ${d.roundTrips} model round trips vs ${c.roundTrips}`;
}

/** "per assistant turn, code mode X ms (IQR …), direct Y ms, the floor Z ms" (issue 11's figure). */
export function overheadVerdict(f: ChatFigures): string {
  const r = (m: ChatMeasure) => msSpread(f.measures[m].perTurn.rounds);
  return `(wall − provider) ÷ assistant turns: code mode ${r("chatCode")}, direct ${r("chatDirect")}; a plain Worker calling the same provider ${r("floorCode")} / ${r("floorDirect")}`;
}

function bytesRows(f: ChatFigures): string[][] {
  return f.bytes.map((b: ChatBytes) => {
    const base = f.bytes.find((x) => x.wire === b.wire && x.surface === "codeMode")!;
    return [
      WIRE_LABEL[b.wire],
      SURFACE_LABEL[b.surface],
      String(b.roundTrips),
      String(b.toolsOffered),
      n(b.promptBytes),
      kib(b.promptBytes),
      `${n(b.requests[0]!.toolsBytes)} B × ${b.requests.length}`,
      b.requests.map((r) => n(r.bytes)).join(", "),
      b.surface === "codeMode" ? "1× (baseline)" : ratio(b.promptBytes, base.promptBytes),
    ];
  });
}

export function reportChat(f: ChatFigures): string[] {
  const p = f.plan;
  const m = f.measures;
  const round = (x: ChatMeasure, k: ChatMetric) => m[x][k].rounds;
  const L: string[] = [];
  L.push(`## 8. \`/chat\`: one scripted multi-tool task over a 300-tool catalog (issue 11)`, "");
  L.push(
    "`POST /v1/sessions/<sid>/chat` on the bench worker's gateway (sections 6 and 7), whose `models.providers` point at the tests' fake",
    "provider server (test/support/fake-provider/server.mjs: OpenAI Chat Completions and Anthropic Messages, every request validated,",
    "scripted model turns), run inside the harness's Node process on 127.0.0.1. The catalog is section 7's 300-tool MCP server",
    '(`workspace`, bench/mcp-tools-server.mjs), attached per chat with `mcpServers` and `allow: ["workspace__*"]`: what a chat app',
    "would run (its own MCP server on the chat), rather than a plugin compiled into the gateway (bench/harness/measure-chat.ts).",
    "",
    "The task (bench/harness/chat-task.ts): *“Acme Corp says support is slow and billing is wrong. Pull up their CRM company record, their",
    "open support tickets and their unpaid invoices, and summarize.”* The fake provider plays one script per surface:",
    "",
    `- **code mode** (default agent): one \`exec\` whose program finds the three tools among the server's 300 by name, calls`,
    `  ${TASK_CALLS.map((c) => `\`${c.tool}\``).join(", ")} one after the other and joins their results; then the answer.`,
    "  2 model round trips.",
    "- **direct exposure** (agent `direct`: code mode and Tool Search off, so every request carries the 300 tool definitions): one",
    "  tool call per round trip, then the same answer. 4 model round trips.",
    "",
    "```js",
    ...EXEC_CODE.split("\n"),
    "```",
    "",
    "Every `/chat` answer is checked (`completed`, the scripted answer, `assistantTurns`, `toolSummary` with no failure, `stopReason:",
    '"final"`); every provider request of 8.1 too (no problem found by the fake server, the surface\'s tools offered, the three tool',
    "results read back by the model).",
    "",
    "### 8.1 Prompt bytes and model round trips",
    "",
    "`meta.promptBytes` (UTF-8 bytes of every request body the gateway sent the provider) of one run per wire format and surface; it",
    "equals the bodies the fake server recorded (re-serialized) and the sum of the requests' `Content-Length` at the server.",
    "",
  );
  L.push(
    ...table(
      [
        "wire format",
        "surface",
        "model round trips",
        "tools per request",
        "prompt bytes",
        "KiB",
        "of which tool definitions",
        "bytes per request",
        "vs code mode",
      ],
      bytesRows(f),
    ),
    "",
    `**${bytesVerdict(f).replace(/^d/, "D")}**: its 300 tool definitions go out with every request, and each round trip`,
    "resends the conversation so far. Code mode's requests carry `exec` and `wait` only; the tools are found and called inside one cell.",
    `Deterministic up to the script marker in the user message and the durations in the exec result: over the timed calls of 8.2,`,
    `code mode's prompt bytes were ${bytesRange(f.timedPromptBytes.codeMode)}, direct's ${bytesRange(f.timedPromptBytes.direct)}.`,
    "",
    "### 8.2 Gateway overhead per assistant turn",
    "",
    `Timed on ${WIRE_LABEL[p.wire]}. Nine measures (the two \`/chat\` surfaces, the long code-mode task, the plain Worker with the bodies of each`,
    `of the three, the durable floor with code mode's bodies of the task and of the long task, the turn opening) in ${p.rounds} interleaved`,
    `rounds (${p.perRound} calls of each per round, one of each in turn, so the calls a difference is taken between run side by side;`,
    `the order reversing every round) after a warm-up of ${p.warmup} each, sequential, keep-alive:`,
    "",
    "- **`/chat`, code mode / direct**: the task as above; one session per surface, a new turn per call (deleted after it, untimed; the",
    "  script is registered before the clock starts). The MCP server is listed when the turn opens, as on every new turn.",
    "- **baseline, plain Worker** (`POST /provider-floor/run` on the same bench worker, bench/bench-provider-floor.ts): the request",
    "  bodies the gateway sent for the task (recorded in 8.1), replayed to a fresh script of the same model turns, one after the other,",
    "  each answer read to its end; no session object, agent loop, transcript, tools or stream parsing. The bodies are staged before",
    "  the clock starts (the gateway's own `/chat` request is small). The least any edge chat endpoint pays for the same round trips.",
    "  In the same rounds it also replays the bodies of the long code-mode task (below), for its own marginal call.",
    "- **durable floor** (`POST /provider-floor/run?store=1`, the same file): the same replay in a Durable Object that stores each",
    "  answer in its SQLite before its next call, so the platform holds that call until the write is committed, as it holds the",
    "  gateway's next model request until the round is stored. The least a chat endpoint that keeps its rounds pays; code mode's",
    "  bodies of the task and of the long task, for its marginal call.",
    "- **turn opening alone**: `POST …/turns` with code mode's turn fields (the same `mcpServers` and `allow`): the part of every",
    "  `/chat` call that opens its turn. Each is deleted once the next has opened, so a turn opens, as in a session of many",
    "  `/chat` calls, beside an earlier turn the session still stores (turns stay until they idle out).",
    "",
    "The provider's time is taken at the fake server, per request: from its arrival (headers read) to the end of its answer. **Overhead",
    "per assistant turn** (issue 11's figure) = (wall time of the call − the provider's time) ÷ model round trips. For `/chat` it",
    "includes the MCP server's own time (each of its requests at the server: the listing when the turn opens and the three tool",
    "calls, each a connect, call and close; this stateless server builds its 300 tools per request), so the next column takes that out",
    "too: the gateway's own time. Figures are per-round medians (median and IQR across rounds); ratios and differences are per round.",
    "",
  );
  const rows = (["chatCode", "chatDirect", "floorCode", "floorDirect"] as const).map((x) => {
    const floor = FLOOR_OF[x];
    return [
      MEASURE_LABEL[x],
      String(m[x].wall.pooled.n),
      msSpread(round(x, "wall")),
      msSpread(round(x, "provider")),
      floor ? `${msSpread(round(x, "mcp"))}, ${reqs(f.mcpRequests[floor])}` : "—",
      `**${msSpread(round(x, "perTurn"))}**`,
      floor ? msSpread(round(x, "ownPerTurn")) : "(same)",
      floor ? `${factor(f.vsFloor[floor].perTurn)}; less the MCP server ${factor(f.vsFloor[floor].ownPerTurn)}` : "1× (baseline)",
    ];
  });
  L.push(
    ...table(
      [
        "measure",
        "n",
        "wall per call",
        "provider per call",
        "MCP server per call",
        "overhead per assistant turn",
        "less the MCP server",
        "vs plain Worker (per-round ratio, per turn)",
      ],
      rows,
    ),
    "",
    `**Overhead per assistant turn, ${overheadVerdict(f)}.** Less the MCP server's own time, the gateway adds`,
    `${msSpread(f.vsFloor.codeMode.ownPerTurnOver)} per turn over the plain Worker in code mode and ${msSpread(f.vsFloor.direct.ownPerTurnOver)} in direct exposure.`,
    `Code mode's figure is per turn over half as many turns: the whole call takes ${factor(f.codeVsDirect.wall)} the time of direct's (min–max`,
    `${xRange(f.codeVsDirect.wall.min, f.codeVsDirect.wall.max)}), the gateway's own time in it ${factor(f.codeVsDirect.gateway)}.`,
    "",
    "Where a call's time goes (per-round medians, ms per call). Model calls and tool calls are the turn's trajectory (`GET …/trajectory`:",
    "each model call from the end of the previous tool round to the end of the model's answer, so it includes saving the loop's state,",
    "building the request, sending it and parsing the streamed answer; each outer tool call as the session object ran it), on the",
    "isolate's clock (`Date.now()`, whole milliseconds); the plain Worker times its calls the same way.",
    "",
  );
  const cell = (x: ChatMeasure, k: ChatMetric) => msSpread(round(x, k));
  L.push(
    ...table(
      [
        "measure",
        "wall",
        "provider (fake server)",
        "model calls in the isolate, less the provider",
        "tool calls (exec, or the direct calls)",
        "the rest: HTTP edge, session object, turn opening with the MCP listing, the answer",
        "MCP server (in tool calls and turn opening)",
      ],
      (["chatCode", "chatDirect", "floorCode", "floorDirect"] as const).map((x) => [
        MEASURE_LABEL[x],
        cell(x, "wall"),
        cell(x, "provider"),
        cell(x, "modelCalls"),
        FLOOR_OF[x] ? cell(x, "tools") : "—",
        cell(x, "rest"),
        FLOOR_OF[x] ? cell(x, "mcp") : "—",
      ]),
    ),
    "",
    "Each model call, over all timed calls: isolate time less the provider's, median (IQR), and the provider's in brackets, in ms (a",
    "whole-millisecond time less a fractional one, so a call shorter than the clock's step can come out negative):",
    "",
    ...table(
      ["measure", ...[1, 2, 3, 4].map((k) => `call ${k}`)],
      (["chatCode", "chatDirect", "floorCode", "floorDirect"] as const).map((x) => [
        MEASURE_LABEL[x],
        ...[0, 1, 2, 3].map((k) => {
          const c = f.perCall[x][k];
          return c ? `${ms(c.gateway.median)} (IQR ${ms(c.gateway.q1)}–${ms(c.gateway.q3)}) [${ms(c.provider.median)}]` : "";
        }),
      ]),
    ),
    "",
    `- The marginal model round trip (issue 22's line): the same code-mode task with ${f.marginal.extra} more round trips, each a small \`exec\`, run in`,
    `  the same rounds; its gateway time less the provider, the MCP server and the outer tool calls (the cells' own time, timed by`,
    `  the session object) exceeds the task's by ${msSpread(f.marginal.perRoundTrip)} per extra round trip, ${msSpread(f.marginal.over)} more than the plain`,
    `  Worker's marginal call (${msSpread(f.marginal.floorPerCall)}: its replay of the long task's bodies less its replay of the task's, ÷ ${f.marginal.extra},`,
    "  so neither side's figure holds the HTTP edge). The durable floor's marginal call, the same way, is " +
      `${msSpread(f.marginal.durablePerCall)}: the commit`,
    `  each round trip waits for costs a chat endpoint that keeps its rounds ${msSpread(f.marginal.durableOverFloor)} over the plain Worker, and the gateway's`,
    `  marginal round trip is ${msSpread(f.marginal.overDurable)} over the durable floor's.`,
    "  The gateway's figure holds everything a round trip adds (the request built from the transcript, the answer streamed and",
    "  parsed, the call's start and end stored, the step's events, the state) and nothing of the turn's opening. These calls ask for",
    "  JSON (no `Accept: text/event-stream`): the session object then sends the Worker only the turn and the final answer; a client",
    "  that streams gets every event (text deltas, tool calls and results, nested calls), each encoded, sent and parsed, and pays for it.",
    `- Per model call window (model calls less the provider, ÷ round trips), the gateway costs ${msSpread(f.vsFloor.codeMode.roundTripOver)} more than the`,
    `  plain Worker in code mode and ${msSpread(f.vsFloor.direct.roundTripOver)} in direct exposure. Code mode's first answer streams the \`exec\``,
    `  program (${EXEC_CODE.length} characters, which the fake server sends in 7-character argument deltas as vendors stream tool arguments,`,
    `  about ${Math.ceil(JSON.stringify({ code: EXEC_CODE }).length / 7)} events); its second is the short final text. Direct exposure's requests each carry the 300 tool definitions,`,
    "  built and serialized per request.",
    "- Tool calls: code mode's one cell (a fresh VM with the turn's MCP namespace, the three MCP calls through the bridge) against",
    "  direct's three MCP calls made by the loop; both make the same three MCP calls, each a connect, call and close.",
    `- The rest is mostly opening the turn: opening the same turn alone takes ${msSpread(f.open.wall.rounds)}, of which the MCP server`,
    `  ${msSpread(f.open.mcp.rounds)} (listing its 300 tools); the gateway's part is building the turn's catalog and surface and storing`,
    "  the turn. A chat app that attaches the same server to every new turn pays it every time.",
    "",
    "Not measured here: a real provider's own time (the fake one answers at once; a real model takes seconds per round trip and is",
    "charged by the input token, so 8.1's bytes are the larger effect), time to first token, a cold session object (each surface's",
    "session stays warm; every call opens a new turn), and production network. In-isolate times are whole milliseconds.",
    "",
  );
  return L;
}
