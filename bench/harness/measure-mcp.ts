/**
 * Section 7: MCP servers attached to a turn, over the bench worker's gateway (bench/bench-worker.ts)
 * and two real MCP servers on loopback, started here and stopped at the end:
 *   - `everything`: `@modelcontextprotocol/server-everything` over Streamable HTTP (as the tests
 *     start it, test/support/mcp-everything-server.mjs);
 *   - `workspace`: bench/mcp-tools-server.mjs, the SDK's McpServer with 300 generated tools.
 *
 *   1. Model-visible payload of a turn with both servers attached: code mode (`exec` + `wait`)
 *      against the same tools exposed directly (the `direct` agent: code mode and Tool Search off),
 *      same `mcpServers`, same `allow` (only the MCP tools, not the bench worker's 500-tool plugin).
 *      Deterministic, so one turn each.
 *   2. Latency of one `MCP.everything.echo({ message })` inside an exec cell (HTTP → Worker →
 *      session Durable Object → QuickJS → MCP client → server) against the same call made by the
 *      repo's McpClient straight from the Worker (`GET /mcp-echo`: HTTP → Worker → MCP client →
 *      server), an exec cell with no MCP call on the same turn (the cell's own floor) and one with
 *      two echo calls (the marginal cost of a call inside a cell), in interleaved rounds (rounds.ts). The Worker connects, calls and closes per call;
 *      the session object reuses one MCP session per server (src/mcp/mcp-session-pool.ts).
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { getJson, workerRoute, type Gateway, type JsonReply } from "./http.ts";
import type { Plan } from "./options.ts";
import { runRounds } from "./rounds.ts";
import { pooled, roundDifferences, roundMedians, roundRatios, type Summary } from "./stats.ts";
import { sleep, tail, trackGroup } from "./supervise.ts";
import { freePort, stopServer, type Server } from "./workers.ts";

/** The two servers, by the names the turns attach them under. */
export interface McpBenchServers {
  everything: Server;
  workspace: Server;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => (socket.destroy(), resolve(false)));
  });
}

/** Start `node <args…>` with PORT=<free port> in its own process group; resolves once the port accepts. */
async function startNodeServer(root: string, label: string, args: (port: number) => string[], readyMs: number): Promise<Server> {
  const failures: string[] = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    // stdin stays open: bench/mcp-tools-server.mjs exits at its EOF if this process dies.
    const child = spawn(process.execPath, args(port), {
      cwd: root,
      env: { ...process.env, PORT: String(port) },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    trackGroup(child);
    const output = tail(child);
    const server: Server = { base: `http://127.0.0.1:${port}/mcp`, child, output };
    const deadline = performance.now() + readyMs;
    while (performance.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (await accepts(port)) return server;
      await sleep(100);
    }
    await stopServer(server);
    failures.push(`attempt ${attempt} (port ${port}): ${output()}`);
  }
  throw new Error(`could not start the ${label} MCP server:\n${failures.join("\n")}`);
}

/** bench/mcp-tools-server.mjs, the 300-tool server (sections 7 and 8). */
export function startToolsServer(root: string, readyMs: number): Promise<Server> {
  return startNodeServer(root, "300-tool", (port) => [path.join(root, "bench", "mcp-tools-server.mjs"), String(port)], readyMs);
}

export async function startMcpServers(root: string, readyMs: number): Promise<McpBenchServers> {
  const require = createRequire(path.join(root, "package.json"));
  const pkgPath: string = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const entry = path.join(path.dirname(pkgPath), require(pkgPath).bin["mcp-server-everything"]);
  const everything = await startNodeServer(root, "server-everything", () => [entry, "streamableHttp"], readyMs);
  try {
    return { everything, workspace: await startToolsServer(root, readyMs) };
  } catch (error) {
    await stopServer(everything);
    throw error;
  }
}

export async function stopMcpServers(s: McpBenchServers): Promise<void> {
  await Promise.all([stopServer(s.everything), stopServer(s.workspace)]);
}

export const MCP_SURFACES = ["codeMode", "direct"] as const;
export type McpSurface = (typeof MCP_SURFACES)[number];

export interface McpSurfacePayload {
  tools: number;
  names: string[];
  bytes: number;
  /** Per attached server, the bytes of its tools in a direct turn (absent for code mode). */
  perServer: Record<string, { tools: number; bytes: number }> | null;
}

export const MCP_MEASURES = ["cell", "direct", "floor", "cell2"] as const;
export type McpMeasure = (typeof MCP_MEASURES)[number];

export interface McpFigures {
  plan: Plan["mcp"];
  /** Tools each server listed at turn opening. */
  serverTools: Record<string, number>;
  payload: Record<McpSurface, McpSurfacePayload>;
  measures: Record<McpMeasure, Summary>;
  /** Time ratio cell / direct per round (above 1: the cell is slower). */
  ratio: Summary;
  /** Per round, cell − direct, cell − floor and cell2 − cell medians (ms). */
  overDirect: Summary;
  overFloor: Summary;
  secondCall: Summary;
  roundMedians: Record<McpMeasure, number[]>;
}

const ALLOW = ["everything__*", "workspace__*"];
const bytes = (v: unknown): number => new TextEncoder().encode(JSON.stringify(v)).length;

interface OpenTurn {
  tools: string;
  session: string;
  json: any;
}

/** A turn of a fresh session, or (`session`) another turn of that session. */
async function openMcpTurn(gw: Gateway, surface: McpSurface, mcpServers: Record<string, { url: string }>, session?: string): Promise<OpenTurn> {
  session ??= `mcp-${surface}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const body = { ...(surface === "direct" ? { agentId: "direct" } : {}), mcpServers, allow: ALLOW };
  const r = await getJson(
    `${gw.base}/v1/sessions/${session}/turns`,
    { method: "POST", headers: gw.headers, body: JSON.stringify(body) },
    gw.timeoutMs,
  );
  const j = r.json;
  const listed = Array.isArray(j.mcpServers) ? (j.mcpServers as Array<{ name: string; tools?: number; error?: string }>) : [];
  const ok =
    r.status === 201 &&
    typeof j.turnId === "string" &&
    Array.isArray(j.tools) &&
    j.codeModeEngaged === (surface === "codeMode") &&
    listed.length === Object.keys(mcpServers).length &&
    listed.every((s) => typeof s.tools === "number" && s.tools > 0 && !s.error);
  if (!ok) throw new Error(`open ${surface} MCP turn: ${r.status} ${JSON.stringify(j).slice(0, 800)}`);
  return { tools: `${gw.base}/v1/sessions/${session}/turns/${j.turnId}/tools`, session, json: j };
}

function payloadOf(surface: McpSurface, json: any, serverTools: Record<string, number>): McpSurfacePayload {
  const tools: Array<{ name: string }> = json.tools;
  const names = tools.map((t) => t.name);
  const total = Object.values(serverTools).reduce((a, b) => a + b, 0);
  if (surface === "codeMode") {
    if (JSON.stringify([...names].sort()) !== '["exec","wait"]') throw new Error(`code-mode MCP surface: unexpected tools ${names.join(", ")}`);
    return { tools: names.length, names, bytes: bytes(tools), perServer: null };
  }
  if (names.length !== total || !names.every((n) => ALLOW.some((p) => n.startsWith(p.slice(0, -1)))))
    throw new Error(`direct MCP surface: ${names.length} tools (expected ${total}): ${names.slice(0, 10).join(", ")}`);
  const perServer: Record<string, { tools: number; bytes: number }> = {};
  for (const server of Object.keys(serverTools)) {
    const mine = tools.filter((t) => t.name.startsWith(`${server}__`));
    perServer[server] = { tools: mine.length, bytes: bytes(mine) };
  }
  return { tools: names.length, names: [], bytes: bytes(tools), perServer };
}

export async function measureMcp(gw: Gateway, plan: Plan["mcp"], servers: McpBenchServers, log: (msg: string) => void): Promise<McpFigures> {
  const both = { everything: { url: servers.everything.base }, workspace: { url: servers.workspace.base } };
  log("[7] mcp: payload turns (code mode, direct) with server-everything + the 300-tool server");
  const codeMode = await openMcpTurn(gw, "codeMode", both);
  const serverTools = Object.fromEntries((codeMode.json.mcpServers as Array<{ name: string; tools: number }>).map((s) => [s.name, s.tools]));
  if (serverTools.workspace !== 300) throw new Error(`the 300-tool server listed ${serverTools.workspace} tools`);
  const direct = await openMcpTurn(gw, "direct", both);
  const payload = { codeMode: payloadOf("codeMode", codeMode.json, serverTools), direct: payloadOf("direct", direct.json, serverTools) };

  // Latency: a code-mode turn with server-everything only (the 300-tool server's declarations
  // would otherwise be installed in every cell's VM).
  // A new turn of the same session each round: every call is recorded as in a model's turn, never past
  // the turn's 2,000 trajectory events (MAX_TRAJECTORY_EVENTS), past which a call costs less.
  let turn = await openMcpTurn(gw, "codeMode", { everything: both.everything });
  const expected = `Echo: ${plan.message}`;
  const echoText = (v: any): unknown => v?.content?.[0]?.text;
  const timed = async (url: string, init: RequestInit, check: (r: JsonReply) => void): Promise<number> => {
    const t0 = performance.now();
    const r = await getJson(url, init, gw.timeoutMs);
    const ms = performance.now() - t0;
    check(r);
    return ms;
  };
  const exec = (code: string, ok: (value: unknown) => boolean, what: string) => () =>
    timed(`${turn.tools}/exec`, { method: "POST", headers: gw.headers, body: JSON.stringify({ code }) }, (r) => {
      if (r.status !== 200 || r.json.status !== "completed" || !ok(r.json.value))
        throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
    });
  const cellCode = `return await MCP.everything.echo({ message: ${JSON.stringify(plan.message)} });`;
  const floorCode = `return ${JSON.stringify(expected)};`;
  const twoCode = `const m = ${JSON.stringify(plan.message)};\nawait MCP.everything.echo({ message: m });\nreturn await MCP.everything.echo({ message: m });`;
  const directRoute = `/mcp-echo?url=${encodeURIComponent(servers.everything.base)}&message=${encodeURIComponent(plan.message)}`;
  const steps = [
    { name: "cell" as const, perRound: plan.perRound, warmup: plan.warmup, run: exec(cellCode, (v) => echoText(v) === expected, "echo cell") },
    {
      name: "direct" as const,
      perRound: plan.perRound,
      warmup: plan.warmup,
      run: async () => {
        const t0 = performance.now();
        const j = await workerRoute(gw.base, directRoute, gw.timeoutMs);
        const ms = performance.now() - t0;
        if (echoText(j.value) !== expected) throw new Error(`/mcp-echo: ${JSON.stringify(j).slice(0, 300)}`);
        return ms;
      },
    },
    { name: "floor" as const, perRound: plan.perRound, warmup: plan.warmup, run: exec(floorCode, (v) => v === expected, "floor cell") },
    { name: "cell2" as const, perRound: plan.perRound, warmup: plan.warmup, run: exec(twoCode, (v) => echoText(v) === expected, "two-echo cell") },
  ];
  log(
    `[7] mcp: warm-up, then ${plan.rounds} interleaved rounds of echo in a cell / echo from the Worker / a cell without MCP / two echoes in a cell`,
  );
  const s = await runRounds(plan.rounds, steps, undefined, {
    beforeRound: async () => {
      turn = await openMcpTurn(gw, "codeMode", { everything: both.everything }, turn.session);
    },
  });
  log(`[7] mcp: ${MCP_MEASURES.map((m) => `${s[m].flat().length} ${m}`).join(", ")} — all verified`);
  return {
    plan,
    serverTools,
    payload,
    measures: { cell: pooled(s.cell), direct: pooled(s.direct), floor: pooled(s.floor), cell2: pooled(s.cell2) },
    ratio: roundRatios(s.cell, s.direct),
    overDirect: roundDifferences(s.cell, s.direct),
    overFloor: roundDifferences(s.cell, s.floor),
    secondCall: roundDifferences(s.cell2, s.cell),
    roundMedians: { cell: roundMedians(s.cell), direct: roundMedians(s.direct), floor: roundMedians(s.floor), cell2: roundMedians(s.cell2) },
  };
}
