import { MAX_MCP_RESPONSE_BYTES } from "../limits";
import { McpResponseTooLarge } from "./mcp-errors";

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The bytes the gateway reads of one MCP connection's HTTP answers: each answer's body (a JSON
 * answer, or a server-sent stream counted whole) passes at most `maxBytes`, then errors. The SDK
 * reads a JSON answer whole before parsing it, so without this a server could grow the isolate's
 * memory past its limit with one answer.
 *
 * A stream error alone is not enough: the SDK only reports an error of a server-sent stream to
 * `onerror`, and the request would wait for its deadline. So `signal` fires too (its reason the
 * `McpResponseTooLarge`), and the operation's deadline (mcp-deadline.ts) ends the operation at once.
 */
export class McpResponseBound {
  private readonly overflow = new AbortController();
  /** Fires when an answer ran past the bound; the reason is the `McpResponseTooLarge`. */
  readonly signal: AbortSignal = this.overflow.signal;

  constructor(readonly maxBytes: number = MAX_MCP_RESPONSE_BYTES) {}

  /** `base` with every answer's body bounded. */
  wrap(base: Fetch): Fetch {
    return async (input, init) => {
      const response = await base(input, init);
      if (response.body === null) return response;
      return new Response(response.body.pipeThrough(this.cap()), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }

  private cap(): TransformStream<Uint8Array, Uint8Array> {
    let seen = 0;
    return new TransformStream({
      transform: (chunk, controller) => {
        seen += chunk.byteLength;
        if (seen <= this.maxBytes) return controller.enqueue(chunk);
        const error = new McpResponseTooLarge(`the answer is larger than ${this.maxBytes} bytes, the bound on one MCP answer`);
        this.overflow.abort(error);
        controller.error(error);
      },
    });
  }
}
