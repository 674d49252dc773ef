import { expect } from "vitest";
import { api, exec, openTurn, sleep } from "./helpers";

/** One pending operator approval, as `GET …/approvals` lists it. */
export type Pending = { approvalId: string; turnId: string; tool: string; inputPreview: string; requestedAt: number };

/** At least `n` pending approvals in the session (bounded polling), or a clear failure. */
export async function pendingApprovals(session: string, n = 1, token?: string): Promise<Pending[]> {
  for (let i = 0; i < 400; i++) {
    const r = await api("GET", `/v1/sessions/${session}/approvals`, undefined, token);
    if (r.status === 200 && r.json.length >= n) return r.json as Pending[];
    await sleep(25);
  }
  throw new Error(`no ${n} pending approval(s) in session ${session}`);
}

export const listApprovals = async (session: string): Promise<Pending[]> => (await api("GET", `/v1/sessions/${session}/approvals`)).json as Pending[];

export const decide = (session: string, id: string, decision: "allow" | "deny", reason?: string, token?: string) =>
  api("POST", `/v1/sessions/${session}/approvals/${id}`, { decision, ...(reason ? { reason } : {}) }, token);

/** An exec or wait left running (its answer awaited later), e.g. while it waits for a decision. */
export const startExec = (session: string, turnId: string, code: string) =>
  api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/exec`, { code });
export const startWait = (session: string, turnId: string, runId: string) =>
  api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/wait`, { runId });

/** Notes stored under `prefix` in the session, read through a fresh ungated turn. */
export async function notes(session: string, prefix = ""): Promise<string[]> {
  const t = await openTurn(session, {});
  const r = await exec(session, t, `return (await notes_read({ prefix: ${JSON.stringify(prefix)} })).map((n) => n.key)`);
  return r.value;
}

/** No answer of the gateway may carry a stack, a host object or an internal path. */
export function noHostLeak(x: unknown): void {
  const text = JSON.stringify(x);
  expect(text).not.toMatch(/\bat [\w$.<>]+ \(|\.ts:\d+|\.js:\d+|\[object Object\]|node_modules|durable-objects\//);
}
