import { defineToolPlugin } from "../../src/tools";

type Issue = { number: number; title: string; state: "open" | "closed" };

const ISSUES: readonly Issue[] = [
  { number: 1, title: "Cells lose output on park", state: "open" },
  { number: 2, title: "Document namespaces", state: "open" },
  { number: 3, title: "Old bug", state: "closed" },
];

const IssueSchema = {
  type: "object",
  properties: { number: { type: "integer" }, title: { type: "string" }, state: { type: "string", enum: ["open", "closed"] } },
  required: ["number", "title", "state"],
  additionalProperties: false,
};

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error("aborted"));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(new Error("aborted"))), { once: true });
  });
}

/**
 * A plugin with a namespace (issue 23): `Issues.list/get/close` over its own tools, so kit tests
 * drive namespaces through the real path. `issues_close` needs an operator's approval; `issues_list`
 * can be slow (`delayMs`) so a cell parks on it.
 */
export const kitIssues = defineToolPlugin({
  id: "kit-issues",
  name: "Kit issues",
  description: "A small issue tracker with an Issues namespace.",
  origin: "external",
  namespaces: {
    Issues: {
      methods: { list: "issues_list", get: "issues_get", close: "issues_close" },
      description: "The test tracker's issues.",
    },
  },
  tools: (tool) => [
    tool({
      name: "issues_list",
      replaySafe: true,
      description: "List issues, optionally by state; delayMs makes the call slow.",
      parameters: {
        type: "object",
        properties: { state: { type: "string", enum: ["open", "closed"] }, delayMs: { type: "integer", minimum: 0, maximum: 10000 } },
        additionalProperties: false,
      },
      outputSchema: { type: "array", items: IssueSchema },
      execute: async ({ state, delayMs }: { state?: string; delayMs?: number }, ctx) => {
        if (delayMs) await sleep(delayMs, ctx.signal);
        return ISSUES.filter((i) => state === undefined || i.state === state).map((i) => ({ ...i }));
      },
    }),
    tool({
      name: "issues_get",
      replaySafe: true,
      description: "Get one issue by number; fails when there is none.",
      parameters: { type: "object", properties: { number: { type: "integer" } }, required: ["number"], additionalProperties: false },
      outputSchema: IssueSchema,
      execute: ({ number }: { number: number }) => {
        const found = ISSUES.find((i) => i.number === number);
        if (!found) throw new Error(`issue ${number} not found`);
        return { ...found };
      },
    }),
    tool({
      name: "issues_close",
      requiresApproval: true,
      description: "Close an issue (needs an operator's approval).",
      parameters: { type: "object", properties: { number: { type: "integer" } }, required: ["number"], additionalProperties: false },
      execute: async ({ number }: { number: number }, ctx) => {
        await ctx.store.put(`closed:${number}`, true);
        return { closed: number };
      },
    }),
  ],
});
