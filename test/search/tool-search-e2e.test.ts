import { describe, expect, it } from "vitest";
import { api, sessionId } from "../e2e/helpers";
import { mark, recordsSince } from "../support/log-capture";

/**
 * Seed 004's gateway E2E: one gateway with a large fake plugin catalog, run once with direct
 * tools and once with Tool Search. Both reach the same plugin tool; direct exposure sends every
 * schema, Tool Search only its compact bridge; the Tool Search payload is smaller; telemetry and
 * the session logs show the expected counts.
 */
const TASK = { title: "Crash on startup", body: "Steps to reproduce..." };

async function openTurn(body: Record<string, unknown>) {
  const session = sessionId();
  const r = await api("POST", `/v1/sessions/${session}/turns`, { deny: ["exec"], ...body });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return { session, turnId: r.json.turnId as string, turn: r.json };
}

const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;

describe("direct tools vs Tool Search on a 400-tool plugin catalog", () => {
  it("both reach the plugin tool; direct sends every schema, Tool Search only the bridge, and its payload is smaller", async () => {
    // 1 + 3: direct mode exposes the plugin's schemas and can call the tool.
    const direct = await openTurn({ agentId: "searchoff" });
    expect(direct.turn).toMatchObject({ codeModeEngaged: false, toolSearchEngaged: false });
    expect(direct.turn.tools).toHaveLength(400);
    expect(direct.turn.tools.find((t: any) => t.name === "github_issue_create").parameters.required).toEqual(["title"]);
    const m1 = mark();
    const d = await api("POST", `/v1/sessions/${direct.session}/turns/${direct.turnId}/tools/github_issue_create`, TASK);
    expect(d.json).toEqual({ status: "completed", value: { number: 1, title: "Crash on startup" } });

    // 2 + 4: Tool Search exposes only tool_search_code and reaches the same tool.
    const search = await openTurn({ agentId: "search" });
    expect(search.turn).toMatchObject({ codeModeEngaged: false, toolSearchEngaged: true, toolSearchMode: "code" });
    expect(search.turn.tools.map((t: any) => t.name)).toEqual(["tool_search_code"]);
    expect(JSON.stringify(search.turn.tools)).not.toContain("github_issue_create");
    const m2 = mark();
    const s = await api("POST", `/v1/sessions/${search.session}/turns/${search.turnId}/tools/tool_search_code`, {
      code: `
        const hits = await openclaw.tools.search("create a GitHub issue");
        const tool = await openclaw.tools.describe(hits[0].id);
        return await openclaw.tools.call(tool.id, ${JSON.stringify(TASK)});
      `,
    });
    expect(s.json).toMatchObject({ status: "completed", value: { number: 1, title: "Crash on startup" } });

    // 5: the Tool Search payload is smaller — here by more than 50×.
    expect(direct.turn.telemetry.surface).toEqual({ kind: "direct", tools: 400, bytes: bytes(direct.turn.tools) });
    expect(search.turn.telemetry.surface).toEqual({ kind: "tool_search_code", tools: 1, bytes: bytes(search.turn.tools) });
    expect(search.turn.telemetry.surface.bytes * 50).toBeLessThan(direct.turn.telemetry.surface.bytes);

    // 6: telemetry and the session logs show the counts: how many schemas up front, how many
    // searches and describes, which tool was finally called and where it came from.
    expect(d.json.telemetry).toBeUndefined();
    const dt = (await api("DELETE", `/v1/sessions/${direct.session}/turns/${direct.turnId}`)).json.telemetry;
    expect(dt).toMatchObject({
      catalogSize: 400,
      catalogSources: { openclaw: 400, mcp: 0, client: 0 },
      counters: { search: 0, describe: 0, call: 1 },
      calledTools: [{ tool: "github_issue_create", id: "plugin:fleet:github_issue_create", source: "openclaw", calls: 1 }],
    });
    expect(s.json.telemetry).toMatchObject({
      catalogSize: 400,
      counters: { search: 1, describe: 1, call: 1 },
      controlTools: ["tool_search_code"],
      calledTools: [{ tool: "github_issue_create", id: "plugin:fleet:github_issue_create", source: "openclaw", calls: 1 }],
    });
    const directLog = recordsSince(m1).filter((r) => r.kind === "request" && r.sessionId === direct.session && r.tool !== undefined);
    expect(directLog.map((r) => r.tool)).toEqual(["github_issue_create"]);
    const cells = recordsSince(m2).filter((r) => r.kind === "cell" && r.sessionId === search.session);
    expect(cells).toHaveLength(1);
    expect(cells[0]).toMatchObject({ tool: "tool_search_code", outcome: "completed", bridge: { search: 1, describe: 1, call: 1 } });
  });

  it('mode "tools" reaches the same tool with three structured calls', async () => {
    const { session, turnId, turn } = await openTurn({ agentId: "searchtools" });
    expect(turn.telemetry.surface.tools).toBe(3);
    const post = (tool: string, input: unknown) => api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/${tool}`, input);
    const hits = (await post("tool_search", { query: "open a new issue on GitHub" })).json.value;
    expect(hits[0].id).toBe("plugin:fleet:github_issue_create");
    const described = (await post("tool_describe", { id: hits[0].id })).json.value;
    expect(described.outputSchema).toMatchObject({ required: ["number", "title"] });
    const called = (await post("tool_call", { id: described.id, args: TASK })).json;
    expect(called).toMatchObject({
      status: "completed",
      value: { number: 1, title: "Crash on startup" },
      telemetry: { counters: { search: 1, describe: 1, call: 1 } },
    });
  });

  it("search finds tools by what they do across the large catalog", async () => {
    const { session, turnId } = await openTurn({ agentId: "searchtools" });
    const top = async (query: string) =>
      (await api("POST", `/v1/sessions/${session}/turns/${turnId}/tools/tool_search`, { query, limit: 3 })).json.value.map((h: any) => h.name);
    expect(await top("create a GitHub issue")).toContain("github_issue_create");
    expect(await top("book a trip")).toEqual(expect.arrayContaining([expect.stringMatching(/^travel_/)]));
    expect(await top("rotate an access key")).toEqual(expect.arrayContaining([expect.stringMatching(/^security_/)]));
  });
});

describe("fail closed: a surface that breaks its rules is never sent", () => {
  it("a code-mode turn holding a direct-only tool named exec is refused with 500 surface_rejected and logged", async () => {
    const session = sessionId();
    const m = mark();
    const r = await api("POST", `/v1/sessions/${session}/turns`, {});
    expect(r.status).toBe(500);
    expect(r.json.error).toEqual({
      code: "surface_rejected",
      message: 'the model-facing tool surface failed its check (tool "exec" appears twice); nothing was sent',
    });
    expect(recordsSince(m).some((x) => x.kind === "host_error" && x.where === "turn.surface_check")).toBe(true);
    // Without the colliding tool the same turn opens.
    expect((await api("POST", `/v1/sessions/${session}/turns`, { deny: ["exec"] })).status).toBe(201);
    // Tool Search and direct surfaces may hold a direct-only exec beside their controls.
    const ts = await api("POST", `/v1/sessions/${session}/turns`, { agentId: "search" });
    expect(ts.json.tools.map((t: any) => t.name)).toEqual(["tool_search_code", "exec"]);
  });
});
