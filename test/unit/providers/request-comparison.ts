import { afterEach } from "vitest";
import { createModelClient, LEAN_WIRE } from "../../../src/providers/create-model-client";
import { ProviderError, type ModelRequest, type ResolvedModel } from "../../../src/providers";
import type { Clock } from "../../../src/runtime";

/**
 * What the lean-request tests compare: one model call sent by our own request builder
 * (lean-*-request.ts, LEAN_WIRE on) or by the AI SDK's `doStream` (the reference), as the request
 * that reached the fetch (URL, method, every header in order, the body text), what the transport
 * observer saw, and the failure the call ended with.
 */
export type Sent = { url: string; method: string | undefined; headers: Array<[string, string]>; body: string; signal: boolean };

export type CallOutcome = {
  sent: Sent[];
  observed: unknown[];
  error?: { code: string; message: string; status: number; retryAfterSeconds?: number };
};

/** An answer to give: a Response, or a failure of the fetch itself (it gets the request's signal). */
export type Answer = (signal: AbortSignal) => Promise<Response>;

const FIXED: Clock = { now: () => Date.parse("2026-01-01T00:00:00Z") } as Clock;

export async function callWith(
  lean: boolean,
  model: ResolvedModel,
  request: Omit<ModelRequest, "signal">,
  answer: Answer,
  opts: { timeoutMs?: number; abortAfterSend?: boolean } = {},
): Promise<CallOutcome> {
  LEAN_WIRE.enabled = lean;
  const sent: Sent[] = [];
  const observed: unknown[] = [];
  const caller = new AbortController();
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const headers = init?.headers as Record<string, string>;
    sent.push({
      url: String(input),
      method: init?.method,
      headers: Object.entries(headers),
      body: typeof init?.body === "string" ? init.body : `<${typeof init?.body}>`,
      signal: init?.signal instanceof AbortSignal,
    });
    if (opts.abortAfterSend) queueMicrotask(() => caller.abort());
    return answer(init!.signal!);
  }) as typeof globalThis.fetch;
  const client = createModelClient(model, {
    timeoutMs: opts.timeoutMs ?? 10_000,
    fetch,
    clock: FIXED,
    observer: {
      request: (r) => observed.push(r),
      response: (r) => observed.push({ url: r.url, status: r.status }),
      sseEvent: (d) => observed.push(d),
    },
  });
  try {
    for await (const _ of client.stream({ ...request, signal: caller.signal }));
    return { sent, observed };
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    const { code, message, status, retryAfterSeconds } = error;
    return { sent, observed, error: { code, message, status, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) } };
  }
}

/** The lean request is on again after each test (the module default). */
export function restoreLeanWire(): void {
  afterEach(() => {
    LEAN_WIRE.enabled = true;
  });
}

/** A fetch answer that waits until the request's signal fires, then rejects as fetch does. */
export const never: Answer = (signal) =>
  new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

export const respond =
  (body: BodyInit | null, status: number, headers: Record<string, string> = {}, statusText?: string): Answer =>
  async () =>
    new Response(body, { status, headers, ...(statusText !== undefined ? { statusText } : {}) });
