/**
 * Section 8's floor (bench/harness/measure-chat.ts): a plain Worker that calls the provider once
 * per assistant turn with exactly the body the gateway sent on that turn, and reads each answer to
 * its end. No session object, no agent loop, no transcript, no tools: what any edge chat endpoint
 * pays at the least for the same model round trips.
 *
 *   POST /provider-floor/prepare { id, url, headers, bodies }   stage a run (untimed by the harness:
 *                                the gateway's own /chat request is small, so the bodies must not
 *                                travel in the timed request)
 *   POST /provider-floor/run?id=…                               replay the staged bodies one after the
 *                                other; { statuses, bytesIn, callMs } (the run is then forgotten).
 *                                `callMs`: each call, request sent → answer read, on the isolate's
 *                                clock (`Date.now()`, whole ms, as the session object times its
 *                                model calls), so both sides' per-call times compare
 *
 *   POST /provider-floor/run?id=…&store=1                       the same replay in a Durable Object
 *                                (`DurableFloor`) that stores each answer in its SQLite before the next
 *                                call: the least a chat endpoint that keeps its rounds pays. The platform
 *                                holds the next call until that write is committed (the output gate), as
 *                                it holds the gateway's next model request until the round is stored.
 *
 * Staged runs live in this isolate's memory (local workerd keeps one isolate for the whole run, the
 * Durable Object included); at most MAX_STAGED are kept, the oldest dropped first. Loopback URLs only.
 */
import { DurableObject } from "cloudflare:workers";

type Staged = { url: string; headers: Record<string, string>; bodies: string[] };

const MAX_STAGED = 8;
const staged = new Map<string, Staged>();

const fail = (message: string, status = 400) => Response.json({ error: `/provider-floor: ${message}` }, { status });

export async function prepareFloor(req: Request): Promise<Response> {
  if (req.method !== "POST") return fail("POST only", 405);
  const b = (await req.json()) as Partial<Staged> & { id?: unknown };
  if (typeof b.id !== "string" || typeof b.url !== "string" || !Array.isArray(b.bodies) || !b.bodies.every((x) => typeof x === "string"))
    return fail("body must be { id, url, headers, bodies: string[] }");
  if (new URL(b.url).hostname !== "127.0.0.1") return fail("loopback URLs only");
  if (staged.size >= MAX_STAGED) staged.delete(staged.keys().next().value!);
  staged.set(b.id, { url: b.url, headers: b.headers ?? {}, bodies: b.bodies });
  return Response.json({ staged: b.bodies.length });
}

export type FloorEnv = { FLOOR: DurableObjectNamespace<DurableFloor> };

export async function runFloor(req: Request, url: URL, env: FloorEnv): Promise<Response> {
  if (req.method !== "POST") return fail("POST only", 405);
  if (url.searchParams.get("store") === "1") return env.FLOOR.get(env.FLOOR.idFromName("floor")).fetch(req);
  return replay(url, (res) => res.arrayBuffer());
}

/** Replay a staged run's bodies one after the other; `read` reads each answer to its end. */
async function replay(url: URL, read: (res: Response, call: number) => Promise<ArrayBuffer>): Promise<Response> {
  const id = url.searchParams.get("id") ?? "";
  const run = staged.get(id);
  if (!run) return fail(`no staged run ${JSON.stringify(id)}`, 404);
  staged.delete(id);
  const statuses: number[] = [];
  const callMs: number[] = [];
  let bytesIn = 0;
  for (const [call, body] of run.bodies.entries()) {
    const started = Date.now();
    const res = await fetch(run.url, { method: "POST", headers: run.headers, body });
    bytesIn += (await read(res, call)).byteLength;
    callMs.push(Date.now() - started);
    statuses.push(res.status);
  }
  return Response.json({ statuses, bytesIn, callMs });
}

/**
 * The durable floor: each answer is a row, written before the next call goes out. The table holds
 * one run at a time (a run starts by deleting the previous one), so it stays as small as the
 * gateway's tables, whose turns the harness deletes after each call.
 */
export class DurableFloor extends DurableObject {
  private readonly sql = this.ctx.storage.sql;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.sql.exec("CREATE TABLE IF NOT EXISTS answers (call INTEGER PRIMARY KEY, answer TEXT NOT NULL)");
  }

  override async fetch(req: Request): Promise<Response> {
    this.sql.exec("DELETE FROM answers");
    return replay(new URL(req.url), async (res, call) => {
      const text = await res.text();
      this.sql.exec("INSERT INTO answers (call, answer) VALUES (?, ?)", call, text);
      return new TextEncoder().encode(text).buffer;
    });
  }
}
