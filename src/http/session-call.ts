import type { SessionReply, SessionRpc, TrustedResult } from "../session";
import { logRecord } from "../observability";
import { GatewayError, sessionResetMessage } from "../errors";

/** A session object's stub, as the router reaches it. */
export type SessionStub = DurableObjectStub<SessionRpc & Rpc.DurableObjectBranded>;

/** Errors thrown by our own Durable Object code carry `remote: true`; infrastructure errors do not. */
function isRemote(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { remote?: unknown }).remote === true;
}

/**
 * One call of a model-visible tool through the session RPC: what `POST …/tools/:toolName` and
 * `tools/call` on `POST /mcp` both do; the answer says whether the result is network-derived. A client that disconnects (`signal`) cancels its
 * exec/wait (needs the enable_request_signal flag). An object reset under the call is asked
 * again through a fresh stub (`stub()`), which reports the cell as failed; when that is not
 * reachable either, `session_reset` is thrown.
 */
export async function callSessionTool(call: {
  stub: () => SessionStub;
  tenant: string;
  turnId: string;
  toolName: string;
  input: unknown;
  requestId: string;
  signal?: AbortSignal;
}): Promise<SessionReply<TrustedResult>> {
  const { tenant, turnId, toolName, requestId, signal } = call;
  const stub = call.stub();
  const onAbort = () =>
    void stub
      .cancelRequest(requestId)
      .catch((error: unknown) => logRecord("host_error", { where: "tool_call.cancel", error, requestId, tenant, turnId, tool: toolName }));
  signal?.addEventListener("abort", onAbort);
  try {
    return await stub.callTool(tenant, turnId, toolName, call.input, requestId);
  } catch (error) {
    // Thrown by the platform, not our code: the object was reset under the call (CPU or
    // memory limit, deploy). A fresh instance reports the cell as failed.
    if (isRemote(error)) throw error;
    logRecord("host_error", { where: "tool_call.session_reset", error, requestId, tenant, turnId, tool: toolName });
    // A stub that saw its object reset stays broken: ask through a fresh one.
    const after = await call
      .stub()
      .lostCall(tenant, turnId, toolName, requestId)
      .catch(
        (lost: unknown) => void logRecord("host_error", { where: "tool_call.lost_call", error: lost, requestId, tenant, turnId, tool: toolName }),
      );
    if (!after) throw new GatewayError("session_reset", `${sessionResetMessage("during this call")} and is not reachable yet; retry shortly`);
    // The lost cell's report is gateway text, not network-derived.
    if (!after.ok) return after;
    return { ok: true, body: { result: (after as unknown as { body: unknown }).body, untrusted: false } };
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
