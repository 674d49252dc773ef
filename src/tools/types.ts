/** A JSON Schema document (draft 2020-12 subset), kept as plain data. */
export type JsonSchema = { [key: string]: unknown };

/** Session-scoped durable key/value storage a tool may use (the session Durable Object's). */
export interface SessionStore {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(prefix: string, limit: number): Promise<Array<{ key: string; value: unknown }>>;
}

/**
 * A turn's place in a Swarm tree: its `depth` (0: a top-level turn; 1: its sub-agent) and the
 * tree's `maxDepth` (the top-level turn's `tools.swarm.maxDepth`, 1–3). Set by the parent's spawn
 * and carried down to every descendant, never taken from a client or a model: a child can never
 * raise it. A turn starts sub-agents only while `depth < maxDepth`.
 */
export type SubAgentDepth = { depth: number; maxDepth: number };

/** Who the turn is for, as the caller said when it opened the turn (never authenticated by the gateway). */
export type TurnParty = { senderId?: string; senderName?: string; channel?: string };

/**
 * What a tool call runs with (seed 002, "Nested tool execution": agent id, session, sender and
 * channel context, abort signal, streaming updates). The same for direct and nested calls. It lives
 * on the host: guest code sees a tool's JSON result only, never this context.
 *
 * `Env` is the plugin's own view of the Worker's bindings (`defineToolPlugin<Env>(...)`).
 */
export type ToolContext<Env = unknown> = {
  /** Aborted when the call is cancelled: the HTTP client went away, the turn was deleted, or the cell's deadline passed. */
  signal: AbortSignal;
  /**
   * The Worker's bindings and secrets (D1, KV, R2, service bindings, vars), as the session Durable
   * Object sees them: the same bindings as the Worker's. Host-side only; a tool decides what of it
   * reaches its result.
   */
  env: Env;
  /** Keep work running after the call returns (a cache write, a log line): the session object's `waitUntil`. */
  waitUntil(promise: Promise<unknown>): void;
  tenantId: string;
  sessionId: string;
  turnId: string;
  store: SessionStore;
  agentId?: string;
  /** The turn's model ("provider/model"), when it has one (a sub-agent defaults to it). */
  model?: string;
  /**
   * The tools this turn may call, by the name policy knows them by (no client tools). A tool that
   * hands work on (Swarm's sessions_spawn) never grants more than these.
   */
  turnTools?: readonly string[];
  /** The most model calls this turn's sub-agents may make together (`tools.swarm.maxModelCalls`). */
  subAgentModelCalls?: number;
  /** Swarm: where this turn sits in its tree of sub-agents (absent: a top-level turn of the default depth). */
  subAgentDepth?: SubAgentDepth;
  /** The invocation id of this call (the trajectory's, and pendingToolCalls' for client calls). */
  callId?: string;
  /** This call is one in flight when the session object restarted, issued again (a `reattachable` tool). */
  reissued?: true;
  party?: TurnParty;
  /** A partial result while the tool runs: transient (the /chat stream shows it; nothing stores it). */
  update?(partial: unknown): void;
};

/** What hooks see of a call (seed 002 "exec": outer code-mode cells are `code_mode_exec`; resuming one with `wait` is `code_mode_wait`). */
export type ToolCallEvent = {
  toolName: string;
  toolKind: "tool" | "code_mode_exec" | "code_mode_wait";
  /** `code_mode_exec` only: the cell's language, when known. */
  toolInputKind?: "javascript" | "typescript";
  input: unknown;
  /** Called from a cell (or Tool Search's code), not directly by the model. */
  nested: boolean;
  context: { tenantId: string; sessionId: string; turnId: string; agentId?: string; party?: TurnParty };
};

/**
 * A `before_tool_call` answer: nothing (allow as is), `block` (the call fails with this reason),
 * `input` (replaces the input; validated again against the tool's schema), `requireApproval`.
 */
export type BeforeToolCallResult = void | undefined | { block?: string; input?: unknown; requireApproval?: boolean };

export type ToolHooks = {
  before_tool_call?(event: ToolCallEvent): BeforeToolCallResult | Promise<BeforeToolCallResult>;
  /** Sees the bounded result; cannot change it. */
  after_tool_call?(event: ToolCallEvent & { result: { ok: true; value: unknown } | { ok: false; error: string } }): void | Promise<void>;
};

/** One tool as a plugin author writes it. `execute` returns the JSON `details` value. */
export type ToolDefinition<Env = unknown> = {
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
  /**
   * A call that was in flight when the session object restarted is issued again with the same
   * `ctx.callId`, and answers the outcome of the work the first one started (it re-attaches by
   * call id, never repeats the work): a parked cell waiting on it resumes instead of failing.
   */
  reattachable?: boolean;
  /**
   * A `reattachable` tool's word that the call re-issued under `ctx.callId` (`ctx.reissued`) was
   * admitted before the restart (its work started): hooks and approvals are not asked again.
   * Absent, or false: the re-issued call goes through them like a new one.
   */
  admittedBefore?(ctx: ToolContext): Promise<boolean>;
  /** Every call waits for an operator's decision (besides the `approvals.require` config). */
  requiresApproval?: boolean;
  /** Its output comes from the network (fetched pages, third-party APIs): the model sees it marked untrusted. */
  networkDerived?: boolean;
  /** The name policy, approvals and hooks know it by, where it differs from `name` (MCP tools: `<server>__<tool>`). */
  catalogName?: string;
  execute(input: any, ctx: ToolContext<Env>): unknown;
};

/**
 * A plugin's namespace as its author declares it (seed 002 `namespaces`; the older seeds'
 * `registerCodeModeNamespaceForPlugin`): a guest global, e.g. `Issues`, whose methods call the
 * plugin's own tools — `Issues.list(input)` runs `issues_list` with the same one object argument,
 * through the same executor path (hooks, approvals, trajectory) as `issues_list(input)`.
 */
export type ToolNamespaceSpec = {
  /** Method name → the name of a tool of this plugin (cataloged, so not `directOnly`). */
  methods: Record<string, string>;
  /** More tools of this plugin the namespace needs visible; every method's tool is required anyway. */
  requiredTools?: string[];
  /** One line for the model (the exec description), shown only in turns where the namespace is visible. */
  description?: string;
};

/** A namespace as `defineToolPlugin` checked it: methods in declaration order, required tools complete. */
export type ToolNamespace = {
  name: string;
  methods: ReadonlyArray<{ name: string; tool: string }>;
  /** Every tool that must be visible (and this plugin's) for the namespace to appear in a turn. */
  requiredTools: readonly string[];
  description?: string;
};

export type ToolPlugin<Env = unknown> = {
  id: string;
  name: string;
  description: string;
  /** Core edge tools, then bundled plugins, then external plugins: the seed's catalog order. */
  origin: "core" | "bundled" | "external";
  tools: readonly ToolDefinition<Env>[];
  /** Run for every tool call of every turn, direct and nested alike (fail closed when they throw). */
  hooks?: ToolHooks;
  /** Guest namespaces over the plugin's own tools (absent: none). */
  namespaces?: readonly ToolNamespace[];
};
