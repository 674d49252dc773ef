import type { SessionReply } from "../errors";
import type { NestedCall } from "../turns";

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
