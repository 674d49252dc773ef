/**
 * Section 8's model provider: the tests' fake provider server (test/support/fake-provider/server.mjs:
 * OpenAI Chat Completions and Anthropic Messages, scripted model turns, every request validated and
 * recorded), run in this process on 127.0.0.1, with a tap that times every model request at the
 * server: from its arrival (headers read) to the end of its answer. The bench client is idle while
 * a `/chat` call is in flight, so the server has this process to itself then.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { FakeRequestRecord, FakeStep } from "../../test/support/fake-provider/types.ts";

/** One scripted model turn, and what the server recorded of one request (the tests' own types). */
export type { FakeStep, FakeRequestRecord as FakeRecord } from "../../test/support/fake-provider/types.ts";

/** A model request as the tap saw it: the body's declared bytes, and its time at the server once answered. */
export interface TappedRequest {
  path: string;
  contentLength: number | null;
  /** Arrival → end of the answer (ms); null until the answer ended. */
  ms: number | null;
}

export interface FakeProvider {
  /** http://127.0.0.1:<port> */
  base: string;
  /** Every model request so far, in arrival order. */
  tapped: TappedRequest[];
  script(steps: FakeStep[]): Promise<{ id: string; marker: string }>;
  records(id: string): Promise<FakeRequestRecord[]>;
  /** Drops a script and its records (the server keeps every body otherwise). */
  forget(id: string): Promise<void>;
  close(): Promise<void>;
}

const MODEL_ROUTES = new Set(["/v1/chat/completions", "/v1/messages"]);

async function json(url: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`fake provider ${init.method ?? "GET"} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * `latencyMs`: every model request is held that long before the server reads it, as a real
 * provider's time to first byte (section 9c: so a fan-out's parallelism is what shows).
 */
export async function startFakeProvider(root: string, latencyMs = 0): Promise<FakeProvider> {
  const mod = await import(pathToFileURL(path.join(root, "test", "support", "fake-provider", "server.mjs")).href);
  const server = mod.createFakeProviderServer();
  if (latencyMs > 0) {
    // The server's own handler runs only after the delay; the request body waits, unread, in its stream.
    const handlers = server.listeners("request");
    server.removeAllListeners("request");
    server.on("request", (req: any, res: any) => {
      const handle = () => handlers.forEach((h: (...a: unknown[]) => void) => h.call(server, req, res));
      if (MODEL_ROUTES.has(new URL(req.url, "http://fake").pathname)) setTimeout(handle, latencyMs);
      else handle();
    });
  }
  const tapped: TappedRequest[] = [];
  // Before the server's own handler: the clock starts when the request's headers are in.
  server.prependListener("request", (req: any, res: any) => {
    if (!MODEL_ROUTES.has(new URL(req.url, "http://fake").pathname)) return;
    const received = performance.now();
    const declared = Number(req.headers["content-length"]);
    const entry: TappedRequest = { path: req.url, contentLength: Number.isFinite(declared) ? declared : null, ms: null };
    tapped.push(entry);
    res.once("finish", () => (entry.ms = performance.now() - received));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const base = `http://127.0.0.1:${server.address().port}`;
  const post = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return {
    base,
    tapped,
    async script(steps) {
      const { scriptId } = await json(`${base}/__scripts`, post({ steps }));
      return { id: scriptId as string, marker: `[script:${scriptId}]` };
    },
    records: (id) => json(`${base}/__scripts/${id}/requests`),
    async forget(id) {
      await json(`${base}/__scripts/${id}`, { method: "DELETE" });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.stopHangs();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The server time of `requests` once each has ended (an answer's last event may still be in flight). */
export async function serverMs(requests: readonly TappedRequest[], timeoutMs = 5_000): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  while (requests.some((r) => r.ms === null)) {
    if (performance.now() > deadline) throw new Error("fake provider: a model request did not end");
    await new Promise((r) => setTimeout(r, 1));
  }
  return requests.map((r) => r.ms!);
}
