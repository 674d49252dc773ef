import { readRequestBody } from "@modelcontextprotocol/sdk/server/requestBody.js";
import { MAX_BODY_BYTES } from "../limits";

/**
 * A JSON-RPC batch whose requests repeat an id is refused whole, before anything in it runs.
 * JSON-RPC 2.0 makes the id the only link between a request and its response (a batch's answers
 * may come in any order), and MCP requires an id the sender has not used before in the session.
 * With a repeat, the SDK's transport keys results by id: one overwrites the other, and the client
 * gets a partial answer that cannot say which calls ran. Running the distinct ones and erroring
 * the repeats would still leave two answers under one id. So: one error, `-32600 Invalid Request`
 * with id null (JSON-RPC's answer when the request as a whole is invalid), HTTP 400 like the
 * transport's other batch refusals, naming the repeated id.
 */

/** The first request id a batch repeats (`1` and `"1"` are different ids); undefined for none or a single message. */
export function repeatedRequestId(message: unknown): string | number | undefined {
  if (!Array.isArray(message)) return undefined;
  const seen = new Set<string | number>();
  for (const m of message) {
    if (typeof m !== "object" || m === null || typeof (m as { method?: unknown }).method !== "string") continue;
    const id = (m as { id?: unknown }).id;
    if (typeof id !== "string" && typeof id !== "number") continue; // a notification, or invalid: the transport answers it
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

export type BatchCheck = { ok: true; parsedBody?: unknown } | { ok: false; response: Response };

/**
 * Reads a POST body (from a clone, within the transport's own bound) and refuses a batch that
 * repeats a request id. A body the transport would refuse (too large, not JSON) is left to it, with
 * its own answers; otherwise the parsed body goes to the transport, which does not read it again.
 */
export async function checkBatchIds(req: Request): Promise<BatchCheck> {
  if (req.method !== "POST" || req.body === null) return { ok: true };
  let parsedBody: unknown;
  try {
    const body = await readRequestBody(req.clone(), MAX_BODY_BYTES);
    if (body.tooLarge) return { ok: true };
    parsedBody = JSON.parse(body.text);
  } catch {
    return { ok: true };
  }
  const repeated = repeatedRequestId(parsedBody);
  if (repeated === undefined) return { ok: true, parsedBody };
  const message = `Invalid Request: the batch repeats request id ${JSON.stringify(repeated)}; each request in a batch needs its own id`;
  return {
    ok: false,
    response: new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32600, message }, id: null }), {
      status: 400,
      headers: { "content-type": "application/json" },
    }),
  };
}
