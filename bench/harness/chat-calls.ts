/**
 * Section 8's two timed calls, each verified and each leaving nothing behind:
 *   - `chatOnce`: one `/chat` call of the task on a fresh turn (then its trajectory is read, the
 *     turn deleted and the script forgotten, untimed);
 *   - `floorOnce`: the plain-Worker floor, the same request bodies replayed to a fresh script of
 *     the same model turns (bench/bench-provider-floor.ts; staged untimed, replayed timed); with
 *     `store`, the durable floor: the replay in a Durable Object that stores each answer first;
 *   - `openOnce`: opening the same turn alone (`POST …/turns`: the MCP listing, the catalog, the
 *     stored turn), what every /chat call of a new turn does first.
 */
import { chatBody, checkAnswer, CHAT_KEY, roundTrips, taskSteps, turnBody, type ChatSurface, type ChatWire } from "./chat-task.ts";
import { serverMs, type FakeProvider, type FakeRecord } from "./fake-provider.ts";
import { getJson, type Gateway } from "./http.ts";

export interface ChatDeps {
  gw: Gateway;
  provider: FakeProvider;
  /** The 300-tool MCP server's /mcp URL. */
  mcpUrl: string;
}

/**
 * One timed call. Wall time at this client; the provider's and the MCP server's time at their
 * servers; model calls and tool calls as the isolate timed them (`Date.now()`, whole ms): for a
 * chat from its trajectory (a model call runs from the end of the previous tool round to the end of
 * the model's answer: state saved, request built, sent, streamed, parsed), for the floor its own.
 */
export interface ChatSample {
  wallMs: number;
  /** Per model request, in order: at the fake server, and in the isolate. */
  providerCalls: number[];
  modelCalls: number[];
  mcpMs: number;
  /** Requests the MCP server answered during the call. */
  mcpRequests: number;
  toolsMs: number;
  turns: number;
  promptBytes: number;
}

const utf8 = (s: string): number => new TextEncoder().encode(s).length;
export const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** Headers and path of a model request on a wire format, as the floor sends them. */
function wireRequest(wire: ChatWire): { path: string; headers: Record<string, string> } {
  return wire === "openai"
    ? { path: "/v1/chat/completions", headers: { "content-type": "application/json", authorization: `Bearer ${CHAT_KEY}` } }
    : { path: "/v1/messages", headers: { "content-type": "application/json", "x-api-key": CHAT_KEY, "anthropic-version": "2023-06-01" } };
}

/** The MCP server's own time, and its request count, since the last read (which resets them). */
async function mcpServerTime(mcpUrl: string): Promise<{ ms: number; requests: number }> {
  const r = await getJson(new URL("/__timings", mcpUrl).href, {}, 10_000);
  if (r.status !== 200 || !Array.isArray(r.json.ms)) throw new Error(`MCP server /__timings: ${r.status}`);
  return { ms: sum(r.json.ms as number[]), requests: r.json.ms.length };
}

const fail = (what: string, r: { status: number; json: unknown }): never => {
  throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
};

/** One /chat call of the task on a fresh turn of `session`; `keep` receives the recorded requests. */
export async function chatOnce(
  d: ChatDeps,
  session: string,
  surface: ChatSurface,
  wire: ChatWire,
  keep?: (records: FakeRecord[]) => void,
  extra = 0,
) {
  const script = await d.provider.script(taskSteps(surface, wire, extra));
  await mcpServerTime(d.mcpUrl); // resets the MCP server's tally
  const first = d.provider.tapped.length;
  const turns = `${d.gw.base}/v1/sessions/${session}/turns`;
  const body = JSON.stringify(chatBody(surface, wire, script.marker, d.mcpUrl));
  const t0 = performance.now();
  const r = await getJson(`${d.gw.base}/v1/sessions/${session}/chat`, { method: "POST", headers: d.gw.headers, body }, d.gw.timeoutMs);
  const wallMs = performance.now() - t0;
  checkAnswer(surface, r.status, r.json, extra);
  const tapped = d.provider.tapped.slice(first);
  const providerCalls = await serverMs(tapped);
  const mcp = await mcpServerTime(d.mcpUrl);
  const t = await getJson(`${turns}/${r.json.turnId}/trajectory`, { headers: d.gw.headers }, d.gw.timeoutMs);
  const models: Array<{ durationMs?: number }> = t.json.modelCalls ?? [];
  const calls: Array<{ durationMs?: number }> = t.json.calls ?? [];
  if (t.status !== 200 || models.length !== roundTrips(surface, extra) || ![...models, ...calls].every((c) => typeof c.durationMs === "number"))
    fail(`${surface} trajectory`, t);
  if (keep) keep(await d.provider.records(script.id));
  await d.provider.forget(script.id);
  const del = await getJson(`${turns}/${r.json.turnId}`, { method: "DELETE", headers: d.gw.headers }, d.gw.timeoutMs);
  if (del.status !== 200) fail("delete turn", del);
  const contentLengths = tapped.map((x) => x.contentLength);
  const sample: ChatSample = {
    wallMs,
    providerCalls,
    modelCalls: models.map((m) => m.durationMs!),
    mcpMs: mcp.ms,
    mcpRequests: mcp.requests,
    toolsMs: sum(calls.map((c) => c.durationMs!)),
    turns: r.json.meta.assistantTurns,
    promptBytes: r.json.meta.promptBytes,
  };
  return { sample, answer: r.json, contentLength: contentLengths.every((n) => n !== null) ? sum(contentLengths as number[]) : null };
}

/** Request bodies of one chat, and the script marker in them (replaced by a fresh script's). */
export interface RecordedBodies {
  marker: string;
  bodies: string[];
}

/** The floor: the same bodies replayed by a plain Worker to a fresh script of the same turns. */
export async function floorOnce(
  d: ChatDeps,
  surface: ChatSurface,
  wire: ChatWire,
  recorded: RecordedBodies,
  extra = 0,
  store = false,
): Promise<ChatSample> {
  const script = await d.provider.script(taskSteps(surface, wire, extra));
  const { path, headers } = wireRequest(wire);
  const bodies = recorded.bodies.map((b) => b.split(recorded.marker).join(script.marker));
  const staged = { id: script.id, url: `${d.provider.base}${path}`, headers, bodies };
  const prep = await getJson(`${d.gw.base}/provider-floor/prepare`, { method: "POST", body: JSON.stringify(staged) }, d.gw.timeoutMs);
  if (prep.status !== 200) fail("/provider-floor/prepare", prep);
  const first = d.provider.tapped.length;
  const t0 = performance.now();
  const r = await getJson(`${d.gw.base}/provider-floor/run?id=${script.id}${store ? "&store=1" : ""}`, { method: "POST" }, d.gw.timeoutMs);
  const wallMs = performance.now() - t0;
  const statuses: number[] = r.json.statuses ?? [];
  if (r.status !== 200 || statuses.length !== bodies.length || !statuses.every((s) => s === 200) || r.json.callMs?.length !== bodies.length)
    fail(`/provider-floor/run (${surface})`, r);
  const providerCalls = await serverMs(d.provider.tapped.slice(first));
  await d.provider.forget(script.id);
  const promptBytes = sum(bodies.map(utf8));
  return { wallMs, providerCalls, modelCalls: r.json.callMs, mcpMs: 0, mcpRequests: 0, toolsMs: 0, turns: bodies.length, promptBytes };
}

/** Opening the task's turn alone, timed: wall time and the MCP server's part of it. */
/** The turn `openOnce` opened last in each session, deleted once the next has opened. */
const openedLast = new Map<string, string>();

export async function openOnce(d: ChatDeps, session: string, surface: ChatSurface): Promise<{ wallMs: number; mcpMs: number }> {
  await mcpServerTime(d.mcpUrl);
  const turns = `${d.gw.base}/v1/sessions/${session}/turns`;
  const body = JSON.stringify(turnBody(surface, d.mcpUrl));
  const t0 = performance.now();
  const r = await getJson(turns, { method: "POST", headers: d.gw.headers, body }, d.gw.timeoutMs);
  const wallMs = performance.now() - t0;
  const listed = r.json.mcpServers?.[0];
  if (r.status !== 201 || r.json.codeModeEngaged !== (surface === "codeMode") || listed?.tools !== 300 || listed.error)
    fail(`open ${surface} turn`, r);
  const mcp = await mcpServerTime(d.mcpUrl);
  // As in a session of many /chat calls, a turn opens beside an earlier one the session still stores.
  const previous = openedLast.get(session);
  openedLast.set(session, r.json.turnId);
  if (previous !== undefined) {
    const del = await getJson(`${turns}/${previous}`, { method: "DELETE", headers: d.gw.headers }, d.gw.timeoutMs);
    if (del.status !== 200) fail("delete turn", del);
  }
  return { wallMs, mcpMs: mcp.ms };
}
