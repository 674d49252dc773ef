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
 * Staged runs live in this isolate's memory (local workerd keeps one isolate for the whole run);
 * at most MAX_STAGED are kept, the oldest dropped first. Loopback URLs only.
 */

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

export async function runFloor(req: Request, url: URL): Promise<Response> {
  if (req.method !== "POST") return fail("POST only", 405);
  const id = url.searchParams.get("id") ?? "";
  const run = staged.get(id);
  if (!run) return fail(`no staged run ${JSON.stringify(id)}`, 404);
  staged.delete(id);
  const statuses: number[] = [];
  const callMs: number[] = [];
  let bytesIn = 0;
  for (const body of run.bodies) {
    const started = Date.now();
    const res = await fetch(run.url, { method: "POST", headers: run.headers, body });
    bytesIn += (await res.arrayBuffer()).byteLength;
    callMs.push(Date.now() - started);
    statuses.push(res.status);
  }
  return Response.json({ statuses, bytesIn, callMs });
}
