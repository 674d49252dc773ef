import type { Settlement } from "../bridge";
import type { RunContext } from "./run-context";

/** Why a client result was not taken: a reason for the caller to map (the HTTP edge: 404 / 409). */
export type DeliveryRefusal = { ok: false; reason: "unknown_call" | "already_delivered"; message: string };

/**
 * A client tool result for a parked (or resuming) run of this turn: stored durably beside the
 * run, and handed straight to the bridge of a wait that is resuming it right now.
 */
export function deliverClientResult(ctx: RunContext, turnId: string, callId: string, settlement: Settlement): { ok: true } | DeliveryRefusal {
  const again: DeliveryRefusal = { ok: false, reason: "already_delivered", message: `a result for ${callId} was already delivered` };
  for (const state of ctx.deps.store.runsOfTurn(turnId)) {
    if (state.deliveredCalls?.includes(callId)) return again;
    const call = state.pending.find((p) => p.kind === "client" && p.callId === callId);
    if (!call) continue;
    if (!ctx.deps.store.storeResult(state.runId, call.id, settlement)) return again;
    ctx.resuming.get(state.runId)?.bridge?.deliver(call.id, settlement);
    return { ok: true };
  }
  return { ok: false, reason: "unknown_call", message: `unknown callId ${JSON.stringify(callId)} for this turn` };
}
