/**
 * The deadline and cancellation of one MCP operation (mcp-client.ts).
 *
 * RULE: an operation ends at the first of: its work settles, `timeoutMs` passes (`mcp_timeout`),
 * the caller's `signal` fires (`mcp_aborted`; already fired: the work never starts). The signal
 * handed to the work fires in the last two cases, so the SDK cancels its request; the answer does
 * not wait for the SDK to notice. Whatever the work throws is classified (mcp-errors.ts).
 */
import { classifyMcpError, mcpFailure, type McpFailure, type McpOperation, type McpOutcome } from "./mcp-errors";

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
  isToolCall = false,
): Promise<McpOutcome<T>> {
  if (options.signal?.aborted) return mcpFailure("mcp_aborted", op, "was aborted before it started");
  const controller = new AbortController();
  const stopped = (): McpFailure =>
    controller.signal.reason === TIMED_OUT
      ? mcpFailure("mcp_timeout", op, `timed out after ${options.timeoutMs} ms`)
      : mcpFailure("mcp_aborted", op, "was aborted");
  const onAbort = () => controller.abort(ABORTED);
  options.signal?.addEventListener("abort", onAbort);
  const timer = setTimeout(() => controller.abort(TIMED_OUT), options.timeoutMs);
  const interrupted = new Promise<McpFailure>((resolve) => controller.signal.addEventListener("abort", () => resolve(stopped())));
  try {
    const done = work(controller.signal).catch((error: unknown) =>
      controller.signal.aborted ? stopped() : classifyMcpError(error, op, secrets, isToolCall),
    );
    return await Promise.race([done, interrupted]);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}
