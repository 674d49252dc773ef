import { McpClient, sessionEnded, type McpConnectOptions, type McpFetch } from "./mcp-client";
import type { McpTarget } from "./mcp-config";
import type { McpCallOptions } from "./mcp-deadline";
import { mcpFailure, type McpOutcome } from "./mcp-errors";

/**
 * The MCP sessions of one session Durable Object (issue 22): one client per server identity
 * (mcp-identity.ts), initialized once and reused by every turn and cell of the object until the
 * server ends the session, an answer breaks the client (byte bound, transport closed) or it sits
 * idle for `idleMs`. A Durable Object may use one request's I/O from another, which a plain Worker
 * may not; the object's name holds its tenant, so no session is ever shared across tenants.
 *
 * RETRIES, ONCE, ONLY WHEN SAFE: a request the server answered HTTP 404 on our `Mcp-Session-Id`
 * was not processed (the protocol's rule), so it is re-sent on a new session, `tools/call`
 * included. A read (listings, `resources/read`, `prompts/get`) that failed to reach the server is
 * retried on a new session too; a `tools/call` that may have reached it never is (its effect may
 * have happened): the client is dropped, the failure answered, and the next call reconnects.
 *
 * BOUNDS: at most `maxSessions` clients; past that the least recently used idle one is closed, and
 * if every one is busy the operation runs on a client of its own, closed after it. Concurrent
 * operations on one server share its client and its connecting handshake.
 */
export type McpOperationKind = "read" | "call";

export const MCP_MAX_SESSIONS = 8;
export const MCP_SESSION_IDLE_MS = 60_000;

type Slot = {
  client?: McpClient;
  connecting?: Promise<McpOutcome<McpClient>>;
  /** Operations running on this slot's client now. */
  busy: number;
  /** Cancels the idle close (see `release`). */
  idle?: () => void;
};

/** Runs `fn` after `ms` and returns its cancel: the pool's idle timers, injectable so tests move time by hand. */
export type McpSchedule = (fn: () => void, ms: number) => () => void;

const realSchedule: McpSchedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};

export type McpSessionPoolOptions = {
  maxSessions?: number;
  idleMs?: number;
  fetch?: McpFetch;
  /** A server's listing went stale (mcp-listing-cache.ts); `key` is its identity. */
  onListingStale?: (key: string) => void;
  /** How a session starts (default `McpClient.connect`; tests pass a fake client). */
  connect?: (target: McpTarget, options: McpConnectOptions) => Promise<McpOutcome<McpClient>>;
  schedule?: McpSchedule;
};

export class McpSessionPool {
  private readonly slots = new Map<string, Slot>();
  private readonly maxSessions: number;
  private readonly idleMs: number;
  /** `initialize` handshakes this pool made (telemetry and tests). */
  connects = 0;

  constructor(private readonly options: McpSessionPoolOptions = {}) {
    this.maxSessions = options.maxSessions ?? MCP_MAX_SESSIONS;
    this.idleMs = options.idleMs ?? MCP_SESSION_IDLE_MS;
  }

  /** Open sessions (and handshakes under way). */
  get size(): number {
    return this.slots.size;
  }

  /**
   * Run `fn` on the session of `key` (connecting first when there is none), within one deadline
   * for the whole operation, connecting and any retry included.
   */
  async run<T>(
    key: string,
    target: McpTarget,
    kind: McpOperationKind,
    options: McpCallOptions,
    fn: (client: McpClient, opts: McpCallOptions) => Promise<McpOutcome<T>>,
  ): Promise<McpOutcome<T>> {
    const started = Date.now();
    const left = (): McpCallOptions => ({ ...options, timeoutMs: Math.max(1, options.timeoutMs - (Date.now() - started)) });
    for (let attempt = 0; ; attempt++) {
      const slot = this.slotFor(key);
      if (!slot) return this.oneOff(key, target, left(), fn);
      const connected = await this.clientOf(key, slot, target, left());
      if (!connected.ok) return connected;
      const client = connected.value;
      slot.busy++;
      let r: McpOutcome<T>;
      try {
        r = await fn(client, left());
      } finally {
        slot.busy--;
        this.release(key, slot);
      }
      if (r.ok) return r;
      const ended = sessionEnded(r);
      const unreachable = r.code === "mcp_unreachable";
      if (ended || unreachable || !client.usable) this.drop(key, client);
      const safe = ended || (kind === "read" && unreachable);
      if (attempt > 0 || !safe || options.signal?.aborted) return r;
    }
  }

  /** Close every session (best effort, in the background of the caller). */
  async closeAll(): Promise<void> {
    const clients = [...this.slots.values()].flatMap((s) => (stopIdle(s), s.client ? [s.client] : []));
    this.slots.clear();
    await Promise.all(clients.map((c) => c.close()));
  }

  /** The slot of `key`, made room for; undefined when the pool is full of busy sessions. */
  private slotFor(key: string): Slot | undefined {
    const found = this.slots.get(key);
    if (found) {
      // Most recently used last.
      this.slots.delete(key);
      this.slots.set(key, found);
      return found;
    }
    if (this.slots.size >= this.maxSessions) {
      const idle = [...this.slots].find(([, s]) => s.busy === 0 && !s.connecting);
      if (!idle) return undefined;
      this.evict(idle[0]);
    }
    const slot: Slot = { busy: 0 };
    this.slots.set(key, slot);
    return slot;
  }

  private async clientOf(key: string, slot: Slot, target: McpTarget, opts: McpCallOptions): Promise<McpOutcome<McpClient>> {
    stopIdle(slot);
    if (slot.client?.usable) return { ok: true, value: slot.client };
    if (slot.client) this.drop(key, slot.client);
    if (!slot.connecting) {
      // Not the caller's signal: the handshake is shared, one caller leaving must not fail the others.
      const connecting = this.connect(key, target, { timeoutMs: opts.timeoutMs });
      slot.connecting = connecting;
      void connecting.then((c) => {
        if (slot.connecting !== connecting) return;
        slot.connecting = undefined;
        if (c.ok && this.slots.get(key) === slot) slot.client = c.value;
        else if (c.ok) void c.value.close();
        else if (this.slots.get(key) === slot && slot.busy === 0) this.slots.delete(key);
        this.release(key, slot);
      });
    }
    return untilAborted(slot.connecting, opts, target.server);
  }

  private connect(key: string, target: McpTarget, opts: McpCallOptions): Promise<McpOutcome<McpClient>> {
    this.connects++;
    return (this.options.connect ?? McpClient.connect.bind(McpClient))(target, {
      ...opts,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
      onListingStale: () => this.options.onListingStale?.(key),
    });
  }

  /** The pool is full of busy sessions: this operation connects, runs and closes on its own. */
  private async oneOff<T>(
    key: string,
    target: McpTarget,
    opts: McpCallOptions,
    fn: (client: McpClient, opts: McpCallOptions) => Promise<McpOutcome<T>>,
  ): Promise<McpOutcome<T>> {
    const started = Date.now();
    const connected = await this.connect(key, target, opts);
    if (!connected.ok) return connected;
    try {
      return await fn(connected.value, { ...opts, timeoutMs: Math.max(1, opts.timeoutMs - (Date.now() - started)) });
    } finally {
      await connected.value.close();
    }
  }

  /** After an operation: an idle session is closed after `idleMs` without use. */
  private release(key: string, slot: Slot): void {
    if (slot.busy > 0 || slot.connecting || this.slots.get(key) !== slot) return;
    stopIdle(slot);
    slot.idle = (this.options.schedule ?? realSchedule)(() => {
      if (this.slots.get(key) === slot && slot.busy === 0 && !slot.connecting) this.evict(key);
    }, this.idleMs);
  }

  /** Forget `client` as the session of `key` (if it still is) and close it. */
  private drop(key: string, client: McpClient): void {
    const slot = this.slots.get(key);
    if (slot?.client === client) slot.client = undefined;
    void client.close();
  }

  private evict(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    stopIdle(slot);
    if (slot.client) void slot.client.close();
  }
}

function stopIdle(slot: Slot): void {
  slot.idle?.();
  slot.idle = undefined;
}

/** `work`, unless the caller's signal fires or its deadline passes first. */
function untilAborted<T>(work: Promise<McpOutcome<T>>, opts: McpCallOptions, server: string): Promise<McpOutcome<T>> {
  const op = { server, what: "connect" };
  if (opts.signal?.aborted) return Promise.resolve(mcpFailure("mcp_aborted", op, "was aborted before it started"));
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(mcpFailure("mcp_timeout", op, `timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const onAbort = () => finish(mcpFailure("mcp_aborted", op, "was aborted"));
    const finish = (r: McpOutcome<T>) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      resolve(r);
    };
    opts.signal?.addEventListener("abort", onAbort);
    void work.then(finish);
  });
}
