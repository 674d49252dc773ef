/**
 * The bench's HTTP client: JSON requests with a timeout, a turn opened on the gateway, timed
 * tool calls whose replies are checked (outside the timed span), and GETs of bench-worker
 * routes. Every request has a timeout; nothing here retries.
 */
import http from "node:http";

export interface JsonReply {
  status: number;
  // The gateway's and the bench worker's replies: checked field by field where used.
  json: any;
}

/**
 * One request through `node:http` on a keep-alive agent (one per origin). Not `fetch()`: undici's
 * fetch spends about 1.3 ms of the client's own time per request on this machine (measured:
 * section 1's reference row), which would count against every figure without being the
 * gateway's. Bodies are strings; headers a plain record.
 */
const agents = new Map<string, any>();
function agentFor(origin: string): any {
  let agent = agents.get(origin);
  if (!agent) agents.set(origin, (agent = new http.Agent({ keepAlive: true })));
  return agent;
}

function request(url: string, init: RequestInit, timeoutMs: number): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  const body = typeof init.body === "string" ? init.body : undefined;
  if (init.body != null && body === undefined) throw new Error("bench http: string bodies only");
  const headers: Record<string, string> = { ...((init.headers as Record<string, string> | undefined) ?? {}) };
  if (body !== undefined) headers["content-length"] = String(new TextEncoder().encode(body).length);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent: agentFor(u.origin),
        method: init.method ?? "GET",
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        headers,
        timeout: timeoutMs,
      },
      (res: any) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode, text }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${init.method ?? "GET"} ${url}: no answer after ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

function parsed(url: string, init: RequestInit, r: { status: number; text: string }): JsonReply {
  try {
    return { status: r.status, json: JSON.parse(r.text) };
  } catch {
    throw new Error(`${init.method ?? "GET"} ${url}: ${r.status}, not JSON: ${r.text.slice(0, 300)}`);
  }
}

export async function getJson(url: string, init: RequestInit, timeoutMs: number): Promise<JsonReply> {
  return parsed(url, init, await request(url, init, timeoutMs));
}

/** `getJson` through the runtime's `fetch()` (for the reference row that shows what the client costs). */
export async function getJsonViaFetch(url: string, init: RequestInit, timeoutMs: number): Promise<JsonReply> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  return parsed(url, init, { status: res.status, text: await res.text() });
}

/** A turn on the gateway (default config: code mode on, demo tools); `session` is its session's URL. */
export interface Turn {
  tools: string;
  url: string;
  session: string;
}

export interface Gateway {
  base: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** A turn of a fresh session, or (`within`) another turn of that turn's session. */
export async function openTurn(gw: Gateway, label: string, within?: Turn): Promise<Turn> {
  const session = within?.session ?? `${gw.base}/v1/sessions/${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const opened = await getJson(`${session}/turns`, { method: "POST", headers: gw.headers, body: "{}" }, gw.timeoutMs);
  if (opened.status !== 201 || typeof opened.json.turnId !== "string" || opened.json.codeModeEngaged !== true) {
    throw new Error(`open turn: ${opened.status} ${JSON.stringify(opened.json).slice(0, 500)}`);
  }
  const url = `${session}/turns/${opened.json.turnId}`;
  return { tools: `${url}/tools`, url, session };
}

export async function deleteTurn(gw: Gateway, turn: Turn): Promise<void> {
  const del = await getJson(turn.url, { method: "DELETE", headers: gw.headers }, gw.timeoutMs);
  if (del.status !== 200) throw new Error(`delete turn: ${del.status} ${JSON.stringify(del.json).slice(0, 300)}`);
}

/** A reply check: throws, naming what was expected, on an unexpected reply. */
export type Check = (r: JsonReply) => void;

/** One timed request; `check` runs after the clock stops. */
export async function timedJson(url: string, init: RequestInit, timeoutMs: number, check: Check, get = getJson): Promise<{ ms: number; json: any }> {
  const t0 = performance.now();
  const r = await get(url, init, timeoutMs);
  const ms = performance.now() - t0;
  check(r);
  return { ms, json: r.json };
}

/** One timed POST to a tool of a turn. */
export function timedTool(gw: Gateway, turn: Turn, tool: string, body: unknown, check: Check, get = getJson): Promise<{ ms: number; json: any }> {
  return timedJson(`${turn.tools}/${tool}`, { method: "POST", headers: gw.headers, body: JSON.stringify(body) }, gw.timeoutMs, check, get);
}

const show = (r: JsonReply, max = 500) => `${r.status} ${JSON.stringify(r.json).slice(0, max)}`;

export const expectCompleted =
  (what: string, value: unknown): Check =>
  (r) => {
    if (r.status !== 200 || r.json.status !== "completed" || r.json.value !== value) throw new Error(`${what}: ${show(r)}`);
  };

export const expectParked =
  (what: string): Check =>
  (r) => {
    if (r.status !== 200 || r.json.status !== "waiting" || r.json.reason !== "yield" || typeof r.json.runId !== "string")
      throw new Error(`${what}: ${show(r)}`);
  };

/** `wait` without a runId: refused inside the session object after the turn lookup (no VM). */
export const expectRefusedWait: Check = (r) => {
  if (r.status !== 200 || r.json.status !== "failed" || r.json.code !== "invalid_input") throw new Error(`refused wait: ${show(r, 300)}`);
};

export const expectFailed =
  (what: string): Check =>
  (r) => {
    if (r.status !== 200 || r.json.status !== "failed") throw new Error(`${what}: ${show(r, 300)}`);
  };

/** GET a bench-worker route; its JSON, or an error with the worker's message. */
export async function workerRoute(base: string, route: string, timeoutMs: number): Promise<any> {
  const r = await getJson(`${base}${route}`, {}, timeoutMs);
  if (r.status !== 200 || r.json.error) throw new Error(`${route}: ${r.status} ${JSON.stringify(r.json).slice(0, 1000)}`);
  return r.json;
}
