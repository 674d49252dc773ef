import { defineToolPlugin, type ToolPlugin } from "../../src/tools";

/**
 * A large fake plugin catalog (seed 004's E2E: "a temporary fake plugin with a large tool
 * catalog"), deterministic: `domains × actions` tools with natural descriptions and small
 * schemas, plus the one tool the tests look for, `github_issue_create`, which records each call
 * in the session's tool data so a test can see that it really ran.
 */
const DOMAINS: Array<[string, string]> = [
  ["calendar", "calendar event"],
  ["github", "GitHub repository item"],
  ["jira", "Jira ticket"],
  ["slack", "Slack message"],
  ["billing", "invoice"],
  ["crm", "customer contact"],
  ["inventory", "stock item"],
  ["fleet", "delivery vehicle"],
  ["hr", "employee record"],
  ["analytics", "dashboard report"],
  ["docs", "shared document"],
  ["email", "email thread"],
  ["storage", "stored file"],
  ["dns", "DNS record"],
  ["payroll", "payroll run"],
  ["support", "support case"],
  ["marketing", "campaign"],
  ["legal", "contract"],
  ["travel", "trip booking"],
  ["facilities", "meeting room"],
  ["security", "access key"],
  ["monitoring", "alert rule"],
  ["build", "CI pipeline"],
  ["wiki", "wiki page"],
  ["survey", "survey response"],
];
const ACTIONS: Array<[string, string]> = [
  ["create", "Create a new"],
  ["list", "List every"],
  ["get", "Get one"],
  ["update", "Update fields of a"],
  ["delete", "Delete a"],
  ["search", "Search by keyword for a"],
  ["archive", "Archive an old"],
  ["export", "Export as CSV each"],
  ["import", "Import from a file a"],
  ["assign", "Assign an owner to a"],
  ["comment", "Add a comment to a"],
  ["close", "Close a"],
  ["reopen", "Reopen a closed"],
  ["summarize", "Summarize the history of a"],
  ["sync", "Sync with the upstream system a"],
  ["tag", "Add labels to a"],
  ["share", "Share with a teammate a"],
  ["restore", "Restore a deleted"],
  ["watch", "Subscribe to changes of a"],
  ["count", "Count matching"],
];

export function largeCatalogPlugin(size = 400): ToolPlugin {
  return defineToolPlugin({
    id: "fleet",
    name: "Large fake catalog",
    description: "Hundreds of generated tools for Tool Search tests and benchmarks.",
    origin: "external",
    tools: (tool) => {
      const tools = [
        tool({
          name: "github_issue_create",
          description: "Create a GitHub issue in a repository with a title, a body and optional labels; returns the issue number.",
          parameters: {
            type: "object",
            properties: {
              title: { type: "string", description: "Issue title." },
              body: { type: "string", description: "Markdown body." },
              labels: { type: "array", items: { type: "string" } },
            },
            required: ["title"],
            additionalProperties: false,
          },
          outputSchema: {
            type: "object",
            properties: { number: { type: "integer" }, title: { type: "string" } },
            required: ["number", "title"],
            additionalProperties: false,
          },
          execute: async ({ title }: { title: string }, ctx) => {
            const n = (((await ctx.store.get("github_issues")) as number | undefined) ?? 0) + 1;
            await ctx.store.put("github_issues", n);
            return { number: n, title };
          },
        }),
      ];
      outer: for (const [action, verb] of ACTIONS) {
        for (const [domain, noun] of DOMAINS) {
          if (tools.length >= size) break outer;
          const name = `${domain}_${action}`;
          if (name === "github_create") continue;
          tools.push(
            tool({
              name,
              description: `${verb} ${noun}${action === "list" || action === "count" || action === "export" ? "s" : ""} in the ${domain} service.`,
              parameters: {
                type: "object",
                properties: {
                  id: { type: "string", description: `The ${noun} id.` },
                  query: { type: "string", description: "Free-text filter." },
                  limit: { type: "integer", minimum: 1, maximum: 100 },
                },
                additionalProperties: false,
              },
              execute: (input: Record<string, unknown>) => ({ tool: name, input }),
            }),
          );
        }
      }
      return tools;
    },
  });
}
