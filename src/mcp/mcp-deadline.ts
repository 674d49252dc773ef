/**
 * The deadline and cancellation of one MCP operation (mcp-client.ts).
 *
 * RULE: an operation ends at the first of: its work settles, `timeoutMs` passes (`mcp_timeout`),
 * the caller's `signal` fires (`mcp_aborted`; already fired: the work never starts). The signal
 * handed to the work fires in the last two cases, so the SDK cancels its request; the answer does
 * not wait for the SDK to notice. So does `bound` (the connection's McpResponseBound signal): an
 * answer past the byte bound fails the operation at once, naming the bound (`mcp_protocol_error`).
 * Whatever the work throws is classified (mcp-errors.ts).
 */
import { classifyMcpError, mcpFailure, McpResponseTooLarge, type McpFailure, type McpOperation, type McpOutcome } from "./mcp-errors";

export type McpCallOptions = { timeoutMs: number; signal?: AbortSignal };

const TIMED_OUT = Symbol("timed out");
const ABORTED = Symbol("aborted");

/**
 * Run `work` under a deadline and the caller's signal. Resolves as soon as either fires, even if
 * the SDK never settles; anything `work` throws is classified.
 */
export async function withDeadline<T>(
  op: McpOperation,
  options: McpCallOptions,
  secrets: readonly string[],
  work: (signal: AbortSignal) => Promise<McpOutcome<T>>,
  extra: { isToolCall?: boolean; bound?: AbortSignal } = {},
): Promise<McpOutcome<T>> {
  if (options.signal?.aborted) return mcpFailure("mcp_aborted", op, "was aborted before it started");
  const controller = new AbortController();
  const stopped = (): McpFailure => {
    const reason: unknown = controller.signal.reason;
    if (reason === TIMED_OUT) return mcpFailure("mcp_timeout", op, `timed out after ${options.timeoutMs} ms`);
    if (reason instanceof McpResponseTooLarge) return mcpFailure("mcp_protocol_error", op, `failed: ${reason.message}`);
    return mcpFailure("mcp_aborted", op, "was aborted");
  };
  const onAbort = () => controller.abort(ABORTED);
  const onOverflow = () => controller.abort(extra.bound?.reason);
  if (extra.bound?.aborted) {
    // An earlier answer on this connection already passed the bound.
    controller.abort(extra.bound.reason);
    return stopped();
  }
  options.signal?.addEventListener("abort", onAbort);
  extra.bound?.addEventListener("abort", onOverflow);
  const timer = setTimeout(() => controller.abort(TIMED_OUT), options.timeoutMs);
  const interrupted = new Promise<McpFailure>((resolve) => controller.signal.addEventListener("abort", () => resolve(stopped())));
  try {
    const done = work(controller.signal).catch((error: unknown) =>
      controller.signal.aborted ? stopped() : classifyMcpError(error, op, secrets, extra.isToolCall),
    );
    return await Promise.race([done, interrupted]);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    extra.bound?.removeEventListener("abort", onOverflow);
  }
}
