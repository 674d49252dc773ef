/** A JSON Schema document (draft 2020-12 subset), kept as plain data. */
export type JsonSchema = { [key: string]: unknown };

/** Session-scoped durable key/value storage a tool may use (the session Durable Object's). */
export interface SessionStore {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(prefix: string, limit: number): Promise<Array<{ key: string; value: unknown }>>;
}

export type ToolContext = {
  signal: AbortSignal;
  tenantId: string;
  sessionId: string;
  turnId: string;
  store: SessionStore;
};

/** One tool as a plugin author writes it. `execute` returns the JSON `details` value. */
export type ToolDefinition = {
  name: string;
  label?: string;
  description: string;
  parameters: JsonSchema;
  /** Trusted declared shape of `details`; validated before the value reaches the guest. */
  outputSchema?: JsonSchema;
  /** Stays model-visible in code mode (its result cannot cross the JSON bridge). */
  directOnly?: boolean;
  /** Safe to replay after a restart (read-only or idempotent); required for `restartSafe` cells. */
  replaySafe?: boolean;
  execute(input: any, ctx: ToolContext): unknown;
};

export type ToolPlugin = {
  id: string;
  name: string;
  description: string;
  /** Core edge tools, then bundled plugins, then external plugins: the seed's catalog order. */
  origin: "core" | "bundled" | "external";
  tools: readonly ToolDefinition[];
};
