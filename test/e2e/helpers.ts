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

import { env } from "cloudflare:test";

/** The session object behind (tenant, session): its RPC, for eviction, alarms and what it stores. */
export function sessionStub(session: string, tenant = "tenant-a") {
  const ns = (env as any).SESSIONS;
  return ns.get(ns.idFromName(`${tenant}:${session}`)) as DurableObjectStub;
}

/**
 * The session object's RPC, with the storage probe the test entries add (test/support/session-probe.ts):
 * what the object stores, read without touching the object's members.
 */
export type SessionProbe = {
  parkedRuns(): Promise<{ runs: number; chunks: number; results: number; storedBytes: number }>;
  runningCalls(): Promise<Record<string, number>>;
  storageUsage(): Promise<{ turns: number; bytes: number }>;
  storageRows<T = Record<string, any>>(query: string, ...binds: unknown[]): Promise<T[]>;
  storageWrite(query: string, ...binds: unknown[]): Promise<void>;
  /** The next statement starting with `prefix` (after `after` such statements ran) fails with `message`. */
  failNextStatement(prefix: string, message: string, after?: number): Promise<void>;
  storageKeys(prefix?: string): Promise<string[]>;
  storageGet(key: string): Promise<unknown>;
  storagePut(key: string, value: unknown): Promise<void>;
  storageEntries(): Promise<Array<[string, unknown]>>;
  storageAlarm(): Promise<number | null>;
  /** Reset the object at once (in-flight work goes with it; storage and its alarm stay): the call rejects. */
  resetObject(): Promise<void>;
  databaseSize(): Promise<number>;
  parkedSnapshot(runId: string): Promise<Uint8Array>;
  replaceParkedSnapshot(runId: string, bytes: Uint8Array): Promise<void>;
  parkedRunsOfTurn(turnId: string): Promise<number>;
  deliveredCalls(record: Array<[string, string]>, ask: Array<[string, string]>): Promise<boolean[]>;
  mcpPool(): Promise<{ connects: number; size: number }>;
  countStatements(): Promise<void>;
  statementCount(): Promise<{ statements: number; transactions: number; byVerb: Record<string, number>; log: string[] }>;
};

export function sessionProbe(session: string, tenant = "tenant-a"): SessionProbe {
  return sessionStub(session, tenant) as unknown as SessionProbe;
}

/**
 * The session's turn specs as schema 13 left them (tests of older layouts start from here): each spec
 * whole, its catalog inline and last, no `turn_catalogs`; the version is the caller's to set.
 */
export async function withInlineCatalogs(session: string, tenant = "tenant-a"): Promise<void> {
  const probe = sessionProbe(session, tenant);
  for (const stmt of [
    "UPDATE turn_specs SET spec = json_set(spec, '$.catalog', json((SELECT json FROM turn_catalogs c WHERE c.digest = turn_specs.catalog))) WHERE catalog IS NOT NULL",
    "DROP INDEX turn_specs_catalog",
    "ALTER TABLE turn_specs DROP COLUMN catalog",
    "DROP TABLE turn_catalogs",
  ])
    await probe.storageWrite(stmt);
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

/** Rows held by parked runs in the session object's storage (its `parkedRuns` RPC). */
export function footprint(session: string, tenant = "tenant-a"): Promise<{ runs: number; chunks: number; results: number; storedBytes: number }> {
  return sessionProbe(session, tenant).parkedRuns();
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Poll the session object's running calls (its `runningCalls` RPC) until `predicate` holds (bounded:
 * fails after `ms`). Tests use it instead of sleeping to decide request order (e.g. "a cell is running").
 */
export async function untilInSession(
  session: string,
  predicate: (running: Record<string, number>) => boolean,
  what: string,
  ms = 10_000,
  tenant = "tenant-a",
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate(await sessionProbe(session, tenant).runningCalls())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

/** A cell (exec or wait) of this session is running (tracked with its abort controller). */
export const cellRunning = (running: Record<string, number>): boolean => Object.values(running).some((n) => n > 0);

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
