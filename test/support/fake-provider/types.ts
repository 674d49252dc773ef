// The fake provider server's script steps and request records as TypeScript types (the server,
// server.mjs, has the contract). Types only, so the bench harness can share them without vitest.

/** One scripted step of the fake provider server (test/support/fake-provider/server.mjs has the contract). */
export type FakeStep =
  | {
      text?: string | string[];
      /** After `text`, `times` more text deltas of `text` (a long answer the script need not carry). */
      repeatText?: { text: string; times: number };
      toolCalls?: { id?: string; name: string; input: unknown }[];
      usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
      /**
       * Streamed usage sent as this raw JSON text instead (a hostile provider: `{"prompt_tokens":"12"}`,
       * `1e400`): OpenAI's usage chunk, Anthropic's `message_start` and `message_delta` usage.
       */
      rawUsage?: { openai?: string; anthropicStart?: string; anthropicDelta?: string };
      finishReason?: "stop" | "tool-calls" | "length" | "content-filter";
      /** Held until `count` requests (of any scripts) reached barrier `name`: they were in flight at once. */
      barrier?: { name: string; count: number };
    }
  | { error: { status: number; message: string; headers?: Record<string, string> } }
  | { hangMs: number; text?: string | string[] }
  | { malformed: true | "shape"; text?: string | string[] };

/** What the fake server recorded of one request. */
export type FakeRequestRecord = {
  wire: "openai" | "anthropic";
  path: string;
  /** Lower-cased request headers; the auth header's value is "present" or "wrong", never the key. */
  headers: Record<string, string>;
  body: any;
  problems: string[];
  /** The client went away before the answer ended. */
  aborted: boolean;
};
