import { SELF } from "cloudflare:test";

export const TOKEN_A = "test-token-a";
export const TOKEN_B = "test-token-b";

export async function api(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = TOKEN_A,
): Promise<{ status: number; json: any; requestId: string }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await SELF.fetch(`http://gateway${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  // The gateway's request id (x-request-id), which its log records carry.
  return { status: res.status, json, requestId: res.headers.get("x-request-id") ?? "" };
}

let counter = 0;
export function sessionId(): string {
  return `s-${Date.now().toString(36)}-${(counter++).toString(36)}`;
}

export async function openTurn(session: string, body: unknown = {}, token: string = TOKEN_A): Promise<string> {
  const r = await api("POST", `/v1/sessions/${session}/turns`, body, token);
  if (r.status !== 201) throw new Error(`openTurn failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.turnId;
}

export async function exec(session: string, turnId: string, code: string, extra: Record<string, unknown> = {}, token: string = TOKEN_A) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code, ...extra }, token);
  if (r.status !== 200) throw new Error(`exec failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

/** A fresh session + turn with the default (demo) config. */
export async function freshTurn(body: unknown = {}): Promise<{ session: string; turnId: string }> {
  const session = sessionId();
  return { session, turnId: await openTurn(session, body) };
}

import { env, runInDurableObject } from "cloudflare:test";
import type { Clock } from "../../src/runtime";

/** The session object behind (tenant, session), for clock injection and eviction. */
export function sessionStub(session: string, tenant = "tenant-a") {
  const ns = (env as any).SESSIONS;
  return ns.get(ns.idFromName(`${tenant}:${session}`)) as DurableObjectStub;
}

/** Run `fn` against the live session object instance (test-only access). */
export function inSession<R>(session: string, fn: (instance: any, state: DurableObjectState) => R | Promise<R>, tenant = "tenant-a"): Promise<R> {
  const run = runInDurableObject as unknown as (stub: unknown, cb: (i: any, s: DurableObjectState) => R | Promise<R>) => Promise<R>;
  return run(sessionStub(session, tenant), fn);
}

export async function setClock(session: string, clock: Clock, tenant = "tenant-a"): Promise<void> {
  await inSession(
    session,
    (instance) => {
      instance.clock = clock;
    },
    tenant,
  );
}

/** After anything hostile, the same session must still run a trivial cell. */
export async function expectHealthy(session: string, turnId: string): Promise<void> {
  const r = await exec(session, turnId, "return 1 + 2");
  if (r.status !== "completed" || r.value !== 3) throw new Error(`session unhealthy: ${JSON.stringify(r)}`);
}

export async function wait(session: string, turnId: string, runId: unknown, token: string = TOKEN_A) {
  const r = await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId }, token);
  if (r.status !== 200) throw new Error(`wait failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

/** Rows held by parked runs in the session object's storage. */
export function footprint(session: string, tenant = "tenant-a"): Promise<{ runs: number; chunks: number; results: number; storedBytes: number }> {
  return inSession(session, (instance) => instance.snapshots.footprint(), tenant);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Poll the live session object until `predicate` holds (bounded: fails after `ms`). Tests use
 * it instead of sleeping to decide request order (e.g. "a cell is running", "a wait is claimed").
 */
export async function untilInSession(
  session: string,
  predicate: (instance: any) => boolean,
  what: string,
  ms = 10_000,
  tenant = "tenant-a",
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await inSession(session, (instance) => predicate(instance), tenant))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

/** A cell (exec or wait) of this session is running (tracked with its abort controller). */
export const cellRunning = (instance: any): boolean => Object.values(instance.runningCalls() as Record<string, number>).some((n) => n > 0);

/** Follow a run through its waits until it settles (bounded). */
export async function settleRun(session: string, turnId: string, first: any, max = 20): Promise<any> {
  let r = first;
  for (let i = 0; i < max && r.status === "waiting"; i++) r = await wait(session, turnId, r.runId);
  return r;
}

/** Park a cell on a client tool (`ask_user`) in a new turn of `session`: the run, its call and the raw waiting result. */
export async function parkOnClientTool(session: string) {
  const turnId = await openTurn(session, { clientTools: [{ name: "ask_user", description: "Ask the user" }] });
  const r = await exec(
    session,
    turnId,
    "const greeting = 'Hello'; const name = await ask_user({ question: 'Name?' }); return greeting + ', ' + name;",
  );
  if (r.status !== "waiting" || r.reason !== "pending_tools") throw new Error(`expected a parked run: ${JSON.stringify(r)}`);
  return { turnId, runId: r.runId as string, callId: r.pendingToolCalls[0].callId as string, result: r };
}
