import type { GatewayConfig } from "../config";
import type { SessionReply } from "../errors";
import type { RedactionOptions } from "../observability";
import type { ModelMessage, ModelToolCall, TransportObserver } from "../providers";
import type { Reservation } from "../quota";
import type { ModelTool, NestedCall, OpenTurnRequest, TurnCounters, TurnSpec } from "../turns";
import type { NotRunReason } from "./agent-loop";
import type { DirectClientAdmission, SubAgents } from "./chat-events";
import type { ChatState } from "./chat-state";
import type { TrajectoryRow } from "./trajectory";

/** Room a write was promised earlier (src/quota reservations): taken from, not checked again. */
export type Promised = { reservation: Reservation; take: number };

/** One outer call as the session object runs it: who called, and the /chat call it belongs to. */
export type OuterCallContext = {
  /** The provider's tool-call id in /chat; a generated `call_<uuid>` on the tools route. */
  callId: string;
  via: "chat" | "route";
  requestId?: string;
  /** The /chat call's signal: cancelling it cancels this call. */
  parent?: AbortSignal;
  /** Each completed nested call, as it completes (the /chat stream's `nested_call` events). */
  onNested?: (call: NestedCall) => void;
  /** Partial updates of running tools under this call (the /chat stream's `tool_update` events; transient). */
  onUpdate?: (invocationId: string | undefined, tool: string, partial: unknown) => void;
};

export type OuterReply = { reply: SessionReply<unknown>; untrusted: boolean };

/**
 * An outer call whose start is on record (`tools.open`): `run` dispatches it, and the reply's
 * `record` puts its end on record. The agent loop writes both inside the storage steps around the
 * call (its model's reply, its result); `tools.run` does all three at once.
 */
export type OpenedCall = { run(): Promise<OuterReply & { record(): void }> };

/** A tracked call of the session: cancelling the turn or the request aborts it; `untrack` ends it. */
export type ChatCall = { signal: AbortSignal; abort(): void; untrack(): void };

/** What the loop keeps of a turn: its /chat state, transcript, trajectory events, and room held in the quota. */
export interface ChatRecords {
  state(turnId: string): ChatState | undefined;
  saveState(turnId: string, state: ChatState, promised?: Promised): void;
  append(turnId: string, message: ModelMessage, promised?: Promised): boolean;
  appendAll(turnId: string, messages: readonly ModelMessage[], promised?: Promised): boolean;
  transcriptBytes(turnId: string): number;
  messages(turnId: string): ModelMessage[];
  event(turnId: string, at: number, kind: string, body: Record<string, unknown>): void;
  events(turnId: string): TrajectoryRow[];
  callEnded(turnId: string, callId: string): void;
  /** Room for records the call must be able to finish (its stop record, a round's placeholders). */
  reserve(bytes: number): Reservation | undefined;
  /**
   * Writes of one step (a model reply, a round's end) in one storage transaction; a throw stores none
   * of them. Absent where writes are not transactional (each is its own).
   */
  step?<T>(fn: () => T): T;
}

/** Why a call was answered without running: the loop's reasons, or a stopped turn's repair (`turn_stopped`). */
export type NotRunCode = NotRunReason | "turn_stopped";

/**
 * What one `/chat` call needs from its session, as five capabilities. The session's turn service
 * provides them; the loop calls down through them (its tools go through the session's one
 * outer-call path) and never back into the object or service that started it.
 */
export interface ChatPort {
  /** Time, the gateway config and Worker environment, and the provider transport of this call. */
  readonly env: {
    now(): number;
    config(): { ok: true; config: GatewayConfig } | { ok: false; message: string };
    vars: Record<string, unknown>;
    redaction(spec: TurnSpec): RedactionOptions;
    observer(ids: { tenant: string; sessionId: string; turnId: string; requestId: string }): TransportObserver | undefined;
    /** Tests swap the provider transport; production uses the platform's fetch. */
    fetch?: typeof fetch;
  };
  /** The session's turns. */
  readonly turns: {
    /** `storedWith`: bytes stored with the turn right after it opens (admitted together with it). */
    open(tenantId: string, sessionId: string, req: OpenTurnRequest, storedWith: number): Promise<SessionReply<{ turnId: string }>>;
    get(tenantId: string, turnId: string): { spec: TurnSpec; counters: TurnCounters } | undefined;
    surface(spec: TurnSpec): { ok: true; tools: ModelTool[] } | { ok: false; message: string };
    wasDelivered(turnId: string, callId: string): boolean;
    /** Whether a parked run still exists (one that expired or was resumed elsewhere no longer waits for its client calls). */
    runParked(runId: string): boolean;
    /** Swarm: the turn's sub-agents rolled up for its meta; none started: undefined. */
    subAgents?(sessionId: string, turnId: string): Promise<SubAgents | undefined>;
  };
  /** Outer calls through the session's one tool path, client tools through its policy, calls answered without running. */
  readonly tools: {
    run(tenantId: string, turnId: string, toolName: string, input: unknown, call: OuterCallContext): Promise<OuterReply>;
    open(tenantId: string, turnId: string, toolName: string, input: unknown, call: OuterCallContext): OpenedCall;
    admitClient(
      tenantId: string,
      turnId: string,
      call: ModelToolCall,
      opts: { callId: string; requestId: string; signal: AbortSignal },
    ): Promise<{ ok: true; input: unknown; admission?: DirectClientAdmission } | { ok: false; message: string }>;
    notRun(tenantId: string, turnId: string, call: { callId: string; tool: string; input: unknown; requestId: string }, code: NotRunCode): void;
  };
  readonly records: ChatRecords;
  /** Calls running now (cancellation), and the turns a /chat call of this instance drives (a stored `running` elsewhere is stale). */
  readonly calls: { track(turnId: string, requestId: string): ChatCall; readonly driving: Set<string> };
}
