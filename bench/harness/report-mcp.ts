/**
 * Report, section 7: MCP servers on a turn: the model-visible payload of code mode against the
 * same MCP tools exposed directly, and one `MCP.everything.echo` in a cell against the same call
 * from the Worker. Pure.
 */
import type { McpFigures } from "./measure-mcp.ts";
import { factor, kib, ms, msSpread, ratio, speedRange, table, TIMING_HEADER, timingCells } from "./report-format.ts";
import { summarize } from "./stats.ts";

export function reportMcp(f: McpFigures): string[] {
  const p = f.plan;
  const { codeMode, direct } = f.payload;
  const servers = Object.entries(f.serverTools)
    .map(([name, n]) => `\`${name}\` (${n} tools)`)
    .join(" and ");
  const L: string[] = [];
  L.push(`## 7. MCP servers on a turn`, "");
  L.push(
    "Two real MCP servers over Streamable HTTP on 127.0.0.1, started by the harness and stopped at the end: `everything`,",
    "`@modelcontextprotocol/server-everything` (the reference server the tests use), and `workspace`, bench/mcp-tools-server.mjs:",
    "the MCP SDK's `McpServer` behind its Streamable HTTP server transport (stateless) with 300 generated tools (15 SaaS-like services ×",
    "4 resources × list/get/create/update/delete, natural descriptions, zod input schemas with ids, filters, enums, pagination). The",
    "gateway is the bench worker's (section 6), the servers attached per turn with `mcpServers` (bench/harness/measure-mcp.ts).",
    "",
    "### 7.1 Model-visible payload",
    "",
    `One turn each with ${servers} attached and the same \`allow: ["everything__*", "workspace__*"]\` (only the MCP tools, not the`,
    "bench worker's 500-tool plugin): code mode (default agent) and direct exposure (the `direct` agent: code mode and Tool Search",
    "off). The turn answer's `tools` serialized as JSON, in UTF-8 bytes. Deterministic, so one turn each.",
    "",
  );
  const rows: string[][] = [
    [
      'code mode: `exec`, `wait` (MCP tools as `MCP.<server>.<tool>()`, typed in `API.read("mcp/<server>.d.ts")`)',
      String(codeMode.tools),
      String(codeMode.bytes),
      kib(codeMode.bytes),
      `${ratio(direct.bytes, codeMode.bytes)} smaller (${((100 * codeMode.bytes) / direct.bytes).toFixed(2)}%)`,
    ],
    ["**baseline**: direct, every MCP tool with its schema", String(direct.tools), String(direct.bytes), kib(direct.bytes), "1× (baseline)"],
  ];
  for (const [name, s] of Object.entries(direct.perServer ?? {}))
    rows.push([`  of which \`${name}__*\``, String(s.tools), String(s.bytes), kib(s.bytes), ""]);
  L.push(
    ...table(["surface", "tools sent", "bytes", "KiB", "vs direct"], rows),
    "",
    `**Code mode sends ${ratio(direct.bytes, codeMode.bytes)} fewer bytes than direct exposure of the same ${direct.tools} MCP tools** (${codeMode.bytes} B vs`,
    `${kib(direct.bytes)} KiB). MCP schemas and descriptions never reach code mode's surface: the model reads a server's declarations`,
    "during the turn when it needs them, so code mode's payload does not grow with the servers' tool count.",
    "",
    "### 7.2 One `MCP.everything.echo` in a cell against the same call from the Worker",
    "",
    `The same MCP call, \`echo({ message: ${JSON.stringify(p.message)} })\` on server-everything, every answer checked (\`Echo: ${p.message}\`):`,
    "",
    "- **cell**: `POST …/tools/exec` with `return await MCP.everything.echo({ message })` on a code-mode turn with only `everything`",
    "  attached (HTTP → Worker → session Durable Object → QuickJS cell → bridge → the object's MCP session, opened when the turn",
    "  opened and reused: `tools/call` only → the value back out), sequential, keep-alive.",
    "- **baseline, direct**: `GET /mcp-echo` on the same bench worker (bench/bench-worker.ts), which connects with the repo's",
    "  `McpClient` (src/mcp), calls `echo` once and closes (HTTP → Worker → MCP client → server): a plain Worker cannot keep one",
    "  request's I/O for the next, so it pays the `initialize` handshake, the call and the close every time. The session object",
    "  keeps one MCP session per server across its requests (src/mcp/mcp-session-pool.ts), so a cell's call is the `tools/call` alone.",
    '- **floor**: an exec cell with no MCP call (`return "…"`) on the same turn: what the cell costs without the MCP call.',
    "- **two calls**: an exec cell making two `echo` calls one after the other: the second call's cost inside a running cell.",
    "",
    `${p.rounds} interleaved rounds (${p.perRound} of each per round, the order reversing every round) after a warm-up of ${p.warmup} each;`,
    "each round's cells run on a new turn of the same session, so every call is recorded as in a model's turn (a turn keeps its first",
    "2,000 trajectory events and only counts the rest, which would make the later rounds' cells cheaper).",
    "Ratios and differences are per round (median against median in the same round), summarized across rounds.",
    "",
  );
  const m = f.measures;
  L.push(
    ...table(
      ["measure", "includes", "n", ...TIMING_HEADER, "vs direct (per-round ratio)"],
      [
        [
          "`MCP.everything.echo` in an exec cell",
          "HTTP + Worker + session Durable Object + QuickJS cell + MCP call on a reused session",
          String(m.cell.n),
          ...timingCells(m.cell),
          `${factor(f.ratio)}; min–max ${speedRange(f.ratio)}`,
        ],
        [
          "**baseline**: `McpClient` echo from the Worker",
          "HTTP + Worker + MCP connect/call/close",
          String(m.direct.n),
          ...timingCells(m.direct),
          "1× (baseline)",
        ],
        ["exec cell without MCP (floor)", "HTTP + Worker + session Durable Object + QuickJS cell", String(m.floor.n), ...timingCells(m.floor), ""],
        ["exec cell with two `echo` calls", "as the first row + a second MCP call", String(m.cell2.n), ...timingCells(m.cell2), ""],
      ],
    ),
    "",
    `**An MCP call from a cell takes ${factor(f.ratio)} the time of the same call made directly from the Worker** (cell ÷ direct, per`,
    `round; medians ${ms(m.cell.median)} ms vs ${ms(m.direct.median)} ms). The difference, ${msSpread(f.overDirect)} per round, is what the cell adds`,
    "around the same MCP work: the Worker → session Durable Object hop (turn lookup, run bookkeeping), a fresh QuickJS VM with the",
    "turn's prelude and MCP declarations, the bridge request out of the VM and the tool executor (input checked against the tool's",
    "schema, bounded result), and, because the cell called a tool, a durable write of the turn's counters before the reply",
    "(durable-objects/session/session-object.ts, `saveCountersIfMoved`), which the floor cell does not make. Split per round:",
    "",
    `- a cell without an MCP call (hop + VM): ${msSpread(summarize(f.roundMedians.floor))};`,
    `- adding one \`echo\` to it (cell − floor): ${msSpread(f.overFloor)}: the MCP \`tools/call\` on the object's reused session, the bridge`,
    "  and executor, and the counters write;",
    `- a second \`echo\` in the same cell (two calls − one call): ${msSpread(f.secondCall)}: one more MCP \`tools/call\` through the`,
    `  bridge, no extra VM, hop or write; the Worker's own call costs ${msSpread(summarize(f.roundMedians.direct))}, HTTP to the Worker included.`,
    "",
    `Per-round medians: cell ${msSpread(summarize(f.roundMedians.cell))}, direct ${msSpread(summarize(f.roundMedians.direct))}, floor ${msSpread(summarize(f.roundMedians.floor))}, two calls ${msSpread(summarize(f.roundMedians.cell2))}.`,
    "",
  );
  return L;
}
