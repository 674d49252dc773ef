/**
 * Section 8's scripted task, the same for both surfaces: over the 300-tool `workspace` MCP server
 * (bench/mcp-tools-server.mjs), find the CRM company, the open support tickets and the unpaid
 * invoices of one customer, and answer with a summary.
 *
 *   - code mode: one `exec` whose program finds the three tools among the server's 300 by name,
 *     calls them one after the other, and joins their results; then the answer (2 model round trips);
 *   - direct exposure (the `direct` agent: code mode and Tool Search off; the model is sent all 300
 *     tools): one tool call per round trip, then the answer (3 + 1 round trips).
 *
 * The fake provider plays both scripts; the bench gateway's provider catalog points at it. Tool
 * call ids are fixed so the prompt bytes do not depend on the server's id counter.
 */
import type { FakeStep } from "./fake-provider.ts";

export const CHAT_SURFACES = ["codeMode", "direct"] as const;
export type ChatSurface = (typeof CHAT_SURFACES)[number];

export const CHAT_WIRES = ["openai", "anthropic"] as const;
export type ChatWire = (typeof CHAT_WIRES)[number];

/** `provider/model` per wire format, in the bench gateway's catalog (chatProviders). */
export const CHAT_MODEL: Record<ChatWire, string> = { openai: "benchoai/gpt-bench", anthropic: "benchant/claude-bench" };

/** The provider key secret (the fake server takes any `fake-key-…`). */
export const CHAT_KEY_BINDING = "BENCH_PROVIDER_KEY";
export const CHAT_KEY = "fake-key-bench";

/** Only the MCP server's tools (not the bench worker's 500-tool plugin). */
export const CHAT_ALLOW = ["workspace__*"];

/** The catalog's three tools the task needs, with the arguments the model passes. */
export const TASK_CALLS = [
  { tool: "crm_company_list", words: ["crm", "company", "list"], input: { query: "Acme" } },
  { tool: "tickets_ticket_list", words: ["ticketsticket", "list"], input: { query: "Acme", status: "active" } },
  { tool: "billing_invoice_list", words: ["billing", "invoice", "list"], input: { query: "Acme", status: "active" } },
] as const;

const SYSTEM = "You are the operations assistant of a SaaS workspace. Use the tools to look things up; answer in two sentences.";
const QUESTION =
  "Acme Corp says support is slow and billing is wrong. Pull up their CRM company record, their open support tickets and their unpaid invoices, and summarize.";
export const FINAL_TEXT =
  "Acme Corp has one company record in the CRM, open tickets in the support desk and active invoices in billing. " +
  "I'd start with the open tickets, then reconcile the invoices with their account owner.";

/** The `exec` program: search the namespace, three calls in order, one joined value. */
export const EXEC_CODE = [
  "// The workspace server has 300 tools: find the three this needs by name, call each, join the results.",
  "const names = Object.keys(MCP.workspace);",
  "const tool = (...words) => {",
  "  const hits = names.filter((n) => words.every((w) => n.toLowerCase().includes(w)));",
  '  if (hits.length !== 1) throw new Error(words.join(" ") + ": " + (hits.join(", ") || "no tool"));',
  "  return MCP.workspace[hits[0]];",
  "};",
  "const read = (r) => JSON.parse(r.content[0].text);",
  ...TASK_CALLS.map((c, i) => `const r${i} = read(await tool(${c.words.map((w) => JSON.stringify(w)).join(", ")})(${JSON.stringify(c.input)}));`),
  'return { customer: "Acme", sources: [r0, r1, r2].map((r) => ({ tool: r.tool, ok: r.ok, filters: r.args })) };',
].join("\n");

/** A fixed tool call id in the wire format's own shape. */
const callId = (wire: ChatWire, n: number) => (wire === "openai" ? `call_bench${n}Xq2vR8sLm4Tz0Kp` : `toolu_01Bench${n}Xq2vR8sLm4Tz0K`);

/** The `exec` of each extra round trip (see taskSteps' `extra`): a cell that computes, no tools. */
export const EXTRA_EXEC_CODE = "const xs = [3, 1, 2]; return xs.sort().join(',');";

/**
 * The scripted model turns of the task for one surface. `extra` (code mode): that many more model
 * round trips before the task's, each one a small `exec`, so the long task differs from the task by
 * exactly `extra` round trips (the marginal cost of a round trip, without the turn's opening).
 */
export function taskSteps(surface: ChatSurface, wire: ChatWire, extra = 0): FakeStep[] {
  const answer: FakeStep = { text: FINAL_TEXT };
  if (surface === "codeMode")
    return [
      ...Array.from({ length: extra }, (_, i) => ({ toolCalls: [{ id: callId(wire, 10 + i), name: "exec", input: { code: EXTRA_EXEC_CODE } }] })),
      { text: "Let me look all three up at once.", toolCalls: [{ id: callId(wire, 1), name: "exec", input: { code: EXEC_CODE } }] },
      answer,
    ];
  return [...TASK_CALLS.map((c, i) => ({ toolCalls: [{ id: callId(wire, i + 1), name: `workspace__${c.tool}`, input: c.input }] })), answer];
}

/** Model round trips of the task (provider requests of one /chat call). */
export const roundTrips = (surface: ChatSurface, extra = 0): number => taskSteps(surface, "openai", extra).length;

/** The turn's own fields: the surface's agent, the `workspace` server attached, only its tools allowed. */
export function turnBody(surface: ChatSurface, mcpUrl: string): Record<string, unknown> {
  return { ...(surface === "direct" ? { agentId: "direct" } : {}), allow: CHAT_ALLOW, mcpServers: { workspace: { url: mcpUrl } } };
}

/** The /chat body of the task (a new turn). */
export function chatBody(surface: ChatSurface, wire: ChatWire, marker: string, mcpUrl: string): unknown {
  return {
    model: CHAT_MODEL[wire],
    ...turnBody(surface, mcpUrl),
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: `${marker} ${QUESTION}` },
    ],
  };
}

/** The bench gateway's provider catalog: both wire formats at the fake server. */
export function chatProviders(fakeBase: string): Record<string, unknown> {
  const compat = { codeMode: "preferred", supportsTools: true };
  const apiKey = `env:${CHAT_KEY_BINDING}`;
  const baseUrl = `${fakeBase}/v1`;
  return {
    benchoai: { api: "openai-completions", baseUrl, apiKey, models: [{ id: "gpt-bench", compat }] },
    benchant: { api: "anthropic-messages", baseUrl, apiKey, models: [{ id: "claude-bench", compat }] },
  };
}

/** Throws unless a /chat answer is the task's: completed with the final text after the expected round trips. */
export function checkAnswer(surface: ChatSurface, status: number, j: any, extra = 0): void {
  const turns = roundTrips(surface, extra);
  const calls = turns - 1;
  const ok =
    status === 200 &&
    j.status === "completed" &&
    j.message?.content === FINAL_TEXT &&
    j.meta?.codeModeEngaged === (surface === "codeMode") &&
    j.meta?.assistantTurns === turns &&
    j.meta?.stopReason === "final" &&
    j.meta?.toolSummary?.calls === calls &&
    j.meta?.toolSummary?.failures === 0 &&
    typeof j.meta?.promptBytes === "number";
  if (!ok) throw new Error(`${surface} /chat: ${status} ${JSON.stringify(j).slice(0, 800)}`);
}
