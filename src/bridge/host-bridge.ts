import type { GuestHost } from "../runtime";
import { jsonTooDeep } from "./json-depth";
import { MAX_BATCH_REQUESTS, MAX_JSON_DEPTH, MAX_SEARCH_QUERY_CHARS } from "../limits";
import { logRecord } from "../observability";

/** A bridge result for one guest request: JSON text for the guest, or an error message. */
export type Settlement = { ok: true; text: string | undefined } | { ok: false; message: string };

/** `callId` is the invocation id of a tool call (the one pendingToolCalls and the trajectory show). */
export type ToolRequest = {
  id: number;
  tool: string;
  input: unknown;
  callId?: string;
  /** Issued again after the session object restarted (`reissue`): the same call, not a new one. */
  reissued?: true;
  /** Swarm: the phase the cell was in when it made the call (`phase(name)`), for the trajectory. */
  phase?: { id: number; name: string };
};

/** A request's Swarm phase as the guest sent it, when it is one. */
function phaseOf(payload: any): ToolRequest["phase"] {
  const p = payload?.phase;
  return p !== null && typeof p === "object" && Number.isInteger(p.id) && typeof p.name === "string"
    ? { id: p.id, name: p.name.slice(0, 200) }
    : undefined;
}

/** Host work a parked run still waits for; persisted with the snapshot (plain JSON). */
export type PendingRequest =
  | { id: number; kind: "tool"; tool: string; input: unknown; callId: string }
  | { id: number; kind: "client"; tool: string; input: unknown; callId: string }
  | { id: number; kind: "timer"; dueAt: number }
  | { id: number; kind: "yield"; reason: string | null }
  /** Settled while parking; its result is stored beside the snapshot. */
  | { id: number; kind: "settled" };

/** What the bridge needs from the turn: the tool executor path and catalog lookups. */
export interface BridgeHandlers {
  call(request: ToolRequest, signal: AbortSignal): Promise<Settlement>;
  /** Client tools are run by the caller: the call parks the cell instead of executing. */
  isClientTool(tool: string): boolean;
  /**
   * The call policy for a client tool call (hooks, approval) before it is handed to the caller:
   * the input to hand out, or why it may not be. Absent: handed out as is.
   */
  admitClient?(request: ToolRequest, signal: AbortSignal): Promise<{ ok: true; input: unknown } | { ok: false; message: string }>;
  /** A client tool call was handed to the caller (counted like any call). */
  clientCalled(request: ToolRequest): void;
  /**
   * Why a client tool call may not be handed to the caller (a restartSafe cell, an input that
   * breaks the tool's schema), or undefined. Refused calls reject in the guest, never pend.
   */
  refuseClientCall?(request: ToolRequest): string | undefined;
  /** The tool's own name for a callable name (what a client sees in pendingToolCalls). */
  toolName(callable: string): string;
  /**
   * A parked host call of `tool` (its own name) that died with the session object: the callable
   * name to issue it again under, with the same call id, when the tool re-attaches to the work
   * the first call started (`reattachable` tools); undefined: the call is lost.
   */
  reissuable?(tool: string): string | undefined;
  search(query: string, limit: number | null): Settlement;
  describe(tool: string): Settlement;
  /**
   * The guest read metadata written outside the gateway from its own memory (an MCP declaration
   * file, a client tool's description): the cell's result is network-derived from now on.
   */
  taint?(source: string): void;
  /** Output items go to the cell's shared output budget. */
  output(kind: "text" | "json", text: string): void;
}

export type BridgeLimits = {
  maxPendingToolCalls: number;
  maxRequestBytes: number;
  /** A client call's input travels in the waiting result, so it must fit the output budget. */
  maxClientInputBytes: number;
};

type Raw = { id: number; op: string; text: string };

type Inflight = {
  id: number;
  kind: "tool" | "client" | "timer";
  tool?: string;
  input?: unknown;
  dueAt?: number;
  callId?: string;
  abort: AbortController;
};

const TOOL_OPS = new Set(["call", "search", "describe"]);

/**
 * Host half of the JSON-only bridge. Guest requests are only *recorded* while guest code
 * runs (the host callback is synchronous); `dispatch()` starts them once the guest yields,
 * which is where the pending-call cap is checked: a batch that would exceed
 * `maxPendingToolCalls` is rejected whole before any call in it starts.
 */
export class HostBridge implements GuestHost {
  private batch = new Map<number, Raw>();
  private batchBytes = 0;
  private readonly inflight = new Map<number, Inflight>();
  private ready: Array<{ id: number; settlement: Settlement }> = [];
  private wake: (() => void) | null = null;
  private closed = false;
  private yields: Array<{ id: number; reason: string | null }> = [];
  /**
   * Set while the run is parked (see `detach`): host results that settle then are handed
   * here to be stored durably, and not queued; the next resume delivers them from storage.
   */
  private onSettled: ((id: number, settlement: Settlement) => void) | null = null;
  /** Called once, before the first tool call is started (the first possible side effect). */
  beforeFirstCall: (() => void) | null = null;

  constructor(
    private readonly handlers: BridgeHandlers,
    private readonly limits: BridgeLimits,
    private readonly timers: { now(): number },
  ) {}

  // ---- GuestHost (synchronous, inside guest execution) ----
  request(id: number, op: string, text: string): void {
    if (this.closed) throw "the code mode run is closed";
    if (!Number.isInteger(id) || id <= 0) throw "invalid bridge request";
    if (text.length > this.limits.maxRequestBytes) throw `bridge request too large (over ${this.limits.maxRequestBytes} bytes)`;
    if (!TOOL_OPS.has(op) && op !== "timer" && op !== "yield") throw `unknown bridge operation`;
    if (jsonTooDeep(text)) throw `bridge request nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (this.batch.size >= MAX_BATCH_REQUESTS || this.batchBytes + text.length > this.limits.maxRequestBytes) {
      throw `too many bridge requests at once (at most ${MAX_BATCH_REQUESTS} and ${this.limits.maxRequestBytes} bytes before the program awaits)`;
    }
    this.batch.set(id, { id, op, text });
    this.batchBytes += text.length;
  }

  output(kind: "text" | "json", text: string): void {
    if (kind === "json" && jsonTooDeep(text)) throw `json() value nested deeper than ${MAX_JSON_DEPTH} levels`;
    this.handlers.output(kind, text);
  }

  taint(source: string): void {
    this.handlers.taint?.(source);
  }

  cancel(id: number): void {
    const queued = this.batch.get(id);
    if (queued) {
      this.batch.delete(id);
      this.batchBytes -= queued.text.length;
    }
    const f = this.inflight.get(id);
    if (f) {
      f.abort.abort();
      this.inflight.delete(id);
    }
  }

  // ---- host side ----
  get inflightCount(): number {
    return this.inflight.size;
  }

  /** The guest asked to yield (`yield_control`); the run parks with reason "yield". */
  get yieldRequested(): boolean {
    return this.yields.length > 0;
  }

  /** Host tool calls still running: the only outstanding work worth waiting for at the deadline. */
  get hostCallsInFlight(): number {
    let n = 0;
    for (const f of this.inflight.values()) if (f.kind === "tool") n++;
    return n;
  }

  /** Client tool calls handed to the caller and not yet answered. */
  get clientCallsInFlight(): number {
    let n = 0;
    for (const f of this.inflight.values()) if (f.kind === "client") n++;
    return n;
  }

  /** The earliest due time of the cell's own timers, or undefined when none is set. */
  nextTimerDue(): number | undefined {
    let next: number | undefined;
    for (const f of this.inflight.values()) if (f.kind === "timer" && (next === undefined || f.dueAt! < next)) next = f.dueAt!;
    return next;
  }

  /** Everything outstanding, as persisted with a parked run. */
  pending(): PendingRequest[] {
    const out: PendingRequest[] = [];
    for (const f of this.inflight.values()) {
      const tool = f.tool === undefined ? "" : this.handlers.toolName(f.tool);
      if (f.kind === "tool") out.push({ id: f.id, kind: "tool", tool, input: f.input, callId: f.callId! });
      else if (f.kind === "client") out.push({ id: f.id, kind: "client", tool, input: f.input, callId: f.callId! });
      else out.push({ id: f.id, kind: "timer", dueAt: f.dueAt! });
    }
    for (const y of this.yields) out.push({ id: y.id, kind: "yield", reason: y.reason });
    return out;
  }

  /**
   * Re-create a parked run's outstanding requests after a restore: timers keep their absolute
   * due times (adopt them in due order: overdue ones fire in that order), client calls wait
   * for their result. Host tool calls are never re-run: a kept (detached) bridge still runs
   * them, otherwise their stored result or their loss decides.
   */
  adopt(request: PendingRequest): void {
    if (this.inflight.has(request.id)) return;
    if (request.kind === "timer") this.startTimer(request.id, request.dueAt);
    else if (request.kind === "client") {
      this.inflight.set(request.id, {
        id: request.id,
        kind: "client",
        tool: request.tool,
        input: request.input,
        callId: request.callId,
        abort: new AbortController(),
      });
    }
  }

  /**
   * A host tool call of a parked run that died with the session object, issued again with its
   * id, input and call id when its tool re-attaches (`reissuable`): false when it cannot be.
   */
  reissue(request: PendingRequest): boolean {
    if (request.kind !== "tool" || this.inflight.has(request.id)) return false;
    const tool = this.handlers.reissuable?.(request.tool);
    if (tool === undefined) return false;
    const abort = new AbortController();
    const { id, input, callId } = request;
    this.inflight.set(id, { id, kind: "tool", tool, input, callId, abort });
    this.handlers.call({ id, tool, input, callId, reissued: true }, abort.signal).then(
      (s) => this.complete(id, s),
      (error: unknown) => {
        logRecord("host_error", { where: "bridge.reissue", error, tool });
        this.complete(id, { ok: false, message: `${tool} failed` });
      },
    );
    return true;
  }

  /**
   * The run is parking while host tool calls still run: keep only those. Timers stop (they
   * are persisted with their due times and re-adopted on resume) and client calls are left
   * to the parked state; what a host call returns from now on goes to `store`, not to a queue.
   */
  detach(store: (id: number, settlement: Settlement) => void): void {
    for (const f of [...this.inflight.values()]) {
      if (f.kind === "tool") continue;
      f.abort.abort();
      this.inflight.delete(f.id);
    }
    this.ready = [];
    this.onSettled = store;
  }

  /** Resume with a kept bridge: results flow to the guest again. */
  reattach(): this {
    this.onSettled = null;
    return this;
  }

  /** The guest is continuing past a yield (its promise is settled by `deliver`). */
  clearYield(): void {
    this.yields = [];
  }

  /** Start everything the guest asked for since the last call. */
  dispatch(): void {
    if (this.batch.size === 0) return;
    const batch = [...this.batch.values()];
    this.batch = new Map();
    this.batchBytes = 0;
    const calls = batch.filter((r) => r.op === "call");
    if (calls.length > 0 && this.beforeFirstCall) {
      const hook = this.beforeFirstCall;
      this.beforeFirstCall = null;
      hook();
    }
    const inflightCalls = [...this.inflight.values()].filter((f) => f.kind !== "timer").length;
    const overCap = inflightCalls + calls.length > this.limits.maxPendingToolCalls;
    for (const r of batch) {
      let payload: any;
      try {
        payload = JSON.parse(r.text);
      } catch {
        this.settle(r.id, { ok: false, message: "malformed bridge request" });
        continue;
      }
      switch (r.op) {
        case "call": {
          if (overCap) {
            this.settle(r.id, {
              ok: false,
              message:
                `too many pending tool calls: ${inflightCalls + calls.length} requested, maxPendingToolCalls is ` +
                `${this.limits.maxPendingToolCalls}; no call in this batch was started. Await fewer calls at once.`,
            });
            break;
          }
          const tool = typeof payload?.tool === "string" ? payload.tool : "";
          const input = payload?.input;
          const abort = new AbortController();
          const callId = `call_${r.id}_${crypto.randomUUID().slice(0, 8)}`;
          if (this.handlers.isClientTool(tool)) {
            if (r.text.length > this.limits.maxClientInputBytes) {
              this.settle(r.id, {
                ok: false,
                message: `input for client tool ${tool} is larger than maxOutputBytes (${this.limits.maxClientInputBytes}); send less`,
              });
              break;
            }
            const refusal = this.handlers.refuseClientCall?.({ id: r.id, tool, input });
            if (refusal !== undefined) {
              this.settle(r.id, { ok: false, message: refusal });
              break;
            }
            if (this.handlers.admitClient) {
              // Policy first (hooks, an approval): until admitted the call is host work (the cell does
              // not park on it); then it is handed to the caller with the input policy let through.
              this.inflight.set(r.id, { id: r.id, kind: "tool", tool, input, callId, abort });
              this.handlers.admitClient({ id: r.id, tool, input, callId }, abort.signal).then(
                (admitted) => {
                  const f = this.inflight.get(r.id);
                  if (!f || this.closed) return; // cancelled, or the run closed meanwhile
                  if (!admitted.ok) return this.complete(r.id, { ok: false, message: admitted.message });
                  this.handlers.clientCalled({ id: r.id, tool, input: admitted.input });
                  this.inflight.set(r.id, { ...f, kind: "client", input: admitted.input });
                  this.wake?.();
                },
                (error: unknown) => {
                  logRecord("host_error", { where: "bridge.admit_client", error, tool });
                  this.complete(r.id, { ok: false, message: `${tool} was blocked: its policy check failed` });
                },
              );
              break;
            }
            this.handlers.clientCalled({ id: r.id, tool, input });
            this.inflight.set(r.id, { id: r.id, kind: "client", tool, input, callId, abort });
            break;
          }
          this.inflight.set(r.id, { id: r.id, kind: "tool", tool, input, callId, abort });
          const phase = phaseOf(payload);
          this.handlers.call({ id: r.id, tool, input, callId, ...(phase ? { phase } : {}) }, abort.signal).then(
            (s) => this.complete(r.id, s),
            (error: unknown) => {
              // The handler itself failed (tool errors are settlements, not throws): the guest
              // gets a plain error, the log gets the cause.
              logRecord("host_error", { where: "bridge.call", error, tool });
              this.complete(r.id, { ok: false, message: `${tool} failed` });
            },
          );
          break;
        }
        case "search": {
          const query = typeof payload?.query === "string" ? payload.query : "";
          this.settle(
            r.id,
            query.length > MAX_SEARCH_QUERY_CHARS
              ? { ok: false, message: `catalog.search query is longer than ${MAX_SEARCH_QUERY_CHARS} characters; describe the tool in a few words` }
              : this.handlers.search(query, payload?.limit ?? null),
          );
          break;
        }
        case "describe":
          this.settle(r.id, this.handlers.describe(typeof payload?.tool === "string" ? payload.tool : ""));
          break;
        case "timer": {
          const delayMs = Math.min(Math.max(0, Number(payload?.delayMs) || 0), 2 ** 31 - 1);
          this.startTimer(r.id, this.timers.now() + delayMs);
          break;
        }
        case "yield":
          this.yields.push({ id: r.id, reason: typeof payload?.reason === "string" ? payload.reason : null });
          break;
      }
    }
  }

  /** A timer due at `dueAt` on the injected clock; fires through the ordinary settle path. */
  startTimer(id: number, dueAt: number): void {
    const abort = new AbortController();
    this.inflight.set(id, { id, kind: "timer", dueAt, abort });
    const delay = Math.max(0, dueAt - this.timers.now());
    const handle = setTimeout(() => this.complete(id, { ok: true, text: undefined }), delay);
    abort.signal.addEventListener("abort", () => clearTimeout(handle));
  }

  private settle(id: number, settlement: Settlement): void {
    this.ready.push({ id, settlement });
    this.wake?.();
  }

  private complete(id: number, settlement: Settlement): void {
    if (!this.inflight.has(id)) return; // cancelled, or the run closed
    this.inflight.delete(id);
    if (this.onSettled) this.onSettled(id, settlement);
    else this.settle(id, settlement);
  }

  /** Deliver a result that arrived from outside (stored while parked, or a client result). */
  deliver(id: number, settlement: Settlement): void {
    if (this.inflight.get(id)?.kind === "timer") return; // timers fire on their own schedule
    this.inflight.delete(id);
    this.settle(id, settlement);
  }

  takeReady(): Array<{ id: number; settlement: Settlement }> {
    const r = this.ready;
    this.ready = [];
    return r;
  }

  /** Resolve when something is ready, `ms` passes, or `signal` aborts. */
  waitForWork(ms: number, signal: AbortSignal): Promise<void> {
    if (this.ready.length > 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done);
      this.wake = done;
    });
  }

  /** Stop everything: abort in-flight host work; late results are dropped. */
  close(): void {
    this.closed = true;
    for (const f of this.inflight.values()) f.abort.abort();
    this.inflight.clear();
    this.batch = new Map();
    this.batchBytes = 0;
    this.ready = [];
  }
}
