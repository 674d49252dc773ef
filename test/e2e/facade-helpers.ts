import { SELF } from "cloudflare:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { sessionProbe, TOKEN_A } from "./helpers";

/** Every SDK request goes through the gateway Worker under test (SELF.fetch), never the network. */
export const viaGateway = ((input: RequestInfo | URL, init?: RequestInit) => SELF.fetch(new Request(input as any, init))) as typeof fetch;

export const GATEWAY = "http://gateway";

/** The official OpenAI client pointed at the gateway: the one-line change (baseURL + a gateway token). */
export function openai(opts: { token?: string; session?: string } = {}) {
  return new OpenAI({
    baseURL: `${GATEWAY}/v1`,
    apiKey: opts.token ?? TOKEN_A,
    fetch: viaGateway,
    maxRetries: 0,
    ...(opts.session ? { defaultHeaders: { "x-session-id": opts.session } } : {}),
  });
}

/** The official Anthropic client pointed at the gateway (it sends the token as x-api-key). */
export function anthropic(opts: { token?: string; session?: string } = {}) {
  return new Anthropic({
    baseURL: GATEWAY,
    apiKey: opts.token ?? TOKEN_A,
    fetch: viaGateway,
    maxRetries: 0,
    ...(opts.session ? { defaultHeaders: { "x-session-id": opts.session } } : {}),
  });
}

/** The run id a turn of the session is parked on (what the scripted model passes to `wait`). */
export async function parkedRunId(session: string, tenant = "tenant-a"): Promise<string> {
  const rows = (await sessionProbe(session, tenant).storageRows("SELECT state FROM chat_turns")) as Array<{ state: string }>;
  for (const row of rows) {
    const s = JSON.parse(row.state);
    if (s.status === "waiting" && s.pending[0]?.runId) return s.pending[0].runId as string;
  }
  throw new Error("no turn of the session is parked on a client tool");
}

/** A cell that keeps a local across a client tool call: its answer proves the same program resumed. */
export const ASK_CODE = "const greeting = 'Hello'; const name = await ask_user({ question: 'Name?' }); return greeting + ', ' + name;";
