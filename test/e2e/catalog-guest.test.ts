import { describe, expect, it } from "vitest";
import { api, exec, freshTurn, openTurn, sessionId, wait } from "./helpers";

// Seed E2E 7, 8, 11.
describe("guest catalog API", () => {
  it("handles are callable functions carrying bounded metadata; toJSON needs no bridge call", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const hits = await catalog.search('list shipments');
       const h = hits[0];
       return { frozen: Object.isFrozen(hits), isFn: typeof h, name: h.callableName, meta: JSON.parse(JSON.stringify(h)), hits };`,
    );
    expect(r.status).toBe("completed");
    expect(r.value.frozen).toBe(true);
    expect(r.value.isFn).toBe("function");
    expect(r.value.name).toBe("shipping_list");
    expect(r.value.meta).toEqual({
      callableName: "shipping_list",
      toolName: "shipping_list",
      label: "List shipments",
      description: "List shipments with their id, paid flag and weight in tons.",
      source: "openclaw",
      input: "{}",
      output: "Array<{ id: string; paid: boolean; tons: number }>",
    });
    expect(r.value.hits[0]).toEqual(r.value.meta);
    // Serialising handles made no describe() bridge request.
    expect(r.telemetry.counters).toMatchObject({ search: 1, describe: 0, call: 0 });
  });

  it("the seed's shipments example runs in one exec through a searched handle", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const [shipmentTool] = await catalog.search("list shipments");
       const shipments = await shipmentTool({});
       return shipments.filter((shipment) => !shipment.paid && shipment.tons > 10);`,
    );
    expect(r).toMatchObject({
      status: "completed",
      value: [
        { id: "SH-1002", paid: false, tons: 18 },
        { id: "SH-1005", paid: false, tons: 22.75 },
      ],
    });
  });

  it("describe() returns the full schema through the bridge", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(session, turnId, "const [h] = await catalog.search('get one shipment by id'); return await h.describe();");
    expect(r.value).toMatchObject({
      name: "shipping_get",
      callableName: "shipping_get",
      source: "openclaw",
      parameters: { type: "object", required: ["id"] },
      outputSchema: { type: "object", additionalProperties: false },
    });
    expect(r.value).not.toHaveProperty("toolName");
    expect(r.telemetry.counters).toMatchObject({ search: 1, describe: 1 });
  });

  it("catalog.all() lists every non-MCP tool in catalog order; search with no match is []", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      "return { all: catalog.all().map((h) => h.callableName), none: await catalog.search('zebra quantum teleport') }",
    );
    expect(r.value).toEqual({ all: ["shipping_list", "shipping_get", "notes_write", "notes_read", "echo"], none: [] });
  });

  it("search limit: default, explicit, and clamped to maxSearchLimit", async () => {
    const session = sessionId();
    const clientTools = Array.from({ length: 70 }, (_, i) => ({ name: `widget_${i}`, description: `Widget tool number ${i}` }));
    const turnId = await openTurn(session, { clientTools });
    const r = await exec(
      session,
      turnId,
      "return [ (await catalog.search('widget')).length, (await catalog.search('widget', { limit: 3 })).length, (await catalog.search('widget', { limit: 500 })).length ]",
    );
    expect(r.value).toEqual([8, 3, 50]);
  });

  it("search rejects with guidance when matches exceed the output budget, and a narrower search still works", async () => {
    const session = sessionId();
    // 50 callable names of ~50 characters do not fit a 2048-byte budget.
    const clientTools = Array.from({ length: 60 }, (_, i) => ({
      name: `quarterly_report_generator_for_region_number_${i}`,
      description: `Report generator ${i}`,
    }));
    const turnId = await openTurn(session, { agentId: "tight", clientTools });
    const r = await exec(
      session,
      turnId,
      `let err; try { await catalog.search('report generator', { limit: 50 }); } catch (e) { err = e.message; }
       const narrow = await catalog.search('report generator', { limit: 2 });
       return { err, narrow: narrow.length };`,
    );
    expect(r.value.err).toMatch(/narrow the query or lower limit/);
    expect(r.value.narrow).toBe(2);
  });

  it("client tools: input is unknown until describe(), names are normalized, reserved names suffixed", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, {
      clientTools: [
        { name: "llm-task", description: "Run an LLM task", parameters: { type: "object", properties: { prompt: { type: "string" } } } },
        { name: "catalog", description: "A tool unluckily named catalog" },
        { name: "delete", description: "Delete a thing" },
        { name: "2fa", description: "Two factor" },
      ],
    });
    const turn = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: [{ name: "llm-task" }, { name: "catalog" }] });
    const r = await exec(
      session,
      turnId,
      `const names = catalog.all().filter((h) => h.source === 'client').map((h) => h.callableName);
       const [llm] = await catalog.search('run an llm task');
       return { names, llmInput: llm.input, llmSchema: (await llm.describe()).parameters, catalogIsApi: typeof catalog.search, hasLlm: typeof llm_task };`,
    );
    expect(r.value.names[0]).toBe("llm_task");
    expect(r.value.names[1]).toMatch(/^catalog_[0-9a-f]{4,}$/);
    expect(r.value.names[2]).toMatch(/^delete_[0-9a-f]{4,}$/);
    expect(r.value.names[3]).toBe("tool_2fa");
    expect(r.value.llmInput).toBe("unknown");
    expect(r.value.llmSchema).toEqual({ type: "object", properties: { prompt: { type: "string" } } });
    expect(r.value.catalogIsApi).toBe("function");
    expect(r.value.hasLlm).toBe("function");
    // The quick index shows the same final names.
    const execTool = turn.json.tools.find((t: any) => t.name === "exec");
    expect(execTool.description).toContain("llm_task(input: unknown) -> ?");
    expect(execTool.description).toMatch(/catalog_[0-9a-f]{4,}\(input: unknown\) -> \?/);
  });

  it("guessed names, ids and denied tools are unreachable", async () => {
    const session = sessionId();
    const turnId = await openTurn(session, { deny: ["notes_*"] });
    const r = await exec(
      session,
      turnId,
      `const out = {};
       out.global = typeof notes_write;
       out.search = (await catalog.search('write a note notes_write', { limit: 50 })).map((h) => h.toolName);
       out.all = catalog.all().map((h) => h.toolName).filter((n) => n.startsWith('notes'));
       return out;`,
    );
    expect(r.value).toEqual({ global: "undefined", search: [], all: [] });
  });

  it("telemetry: catalog size, source breakdown, cumulative counters, one counterScope per turn", async () => {
    const session = sessionId();
    const opened = await api("POST", `/v1/sessions/${session}/turns`, { clientTools: [{ name: "ask_user" }] });
    const turnId = opened.json.turnId;
    expect(opened.json.telemetry).toMatchObject({
      catalogSize: 6,
      catalogSources: { openclaw: 5, mcp: 0, client: 1 },
      counters: { search: 0, describe: 0, call: 0 },
    });
    const a = await exec(session, turnId, "await catalog.search('ship'); return await shipping_list({})");
    const b = await exec(session, turnId, "const [h] = await catalog.search('echo'); await h.describe(); return await echo({ value: 1 })");
    expect(a.telemetry.counters).toEqual({ search: 1, describe: 0, call: 1 });
    expect(b.telemetry.counters).toEqual({ search: 2, describe: 1, call: 2 });
    expect(b.telemetry.counterScope).toBe(a.telemetry.counterScope);
    const other = await api("POST", `/v1/sessions/${session}/turns`, {});
    expect(other.json.telemetry.counterScope).not.toBe(a.telemetry.counterScope);
  });
});

describe("done-when: a 1,000-tool catalog", () => {
  it("shows the model a surface of a few kilobytes, and one exec finds, describes and calls the right tool by search", async () => {
    const session = sessionId();
    const verbs = ["create", "list", "delete", "update", "archive", "export", "import", "search", "sync", "share"];
    const nouns = [
      "invoice",
      "ticket",
      "contact",
      "playlist",
      "shipment",
      "repository",
      "calendar_event",
      "document",
      "dashboard",
      "deployment",
      "payment",
      "subscription",
      "channel",
      "bucket",
      "cluster",
      "alert",
      "customer",
      "order",
      "product",
      "report",
      "user",
      "team",
      "project",
      "milestone",
      "comment",
      "label",
      "webhook",
      "secret",
      "backup",
      "domain",
      "certificate",
      "queue",
      "topic",
      "table",
      "index",
      "notebook",
      "pipeline",
      "incident",
      "runbook",
      "survey",
      "coupon",
      "refund",
      "warehouse",
      "vehicle",
      "route",
      "booking",
      "flight",
      "hotel",
      "recipe",
      "podcast",
      "episode",
      "album",
      "photo",
      "video",
      "note",
      "task",
      "goal",
      "habit",
      "expense",
      "budget",
      "lead",
      "deal",
      "campaign",
      "segment",
      "form",
      "page",
      "site",
      "theme",
      "plugin",
      "license",
      "device",
      "sensor",
      "firmware",
      "printer",
      "meeting",
      "room",
      "desk",
      "badge",
      "shift",
      "timesheet",
      "candidate",
      "job",
      "interview",
      "offer",
      "course",
      "lesson",
      "quiz",
      "grade",
      "patient",
      "appointment",
      "prescription",
      "claim",
      "policy",
      "quote",
      "contract",
      "signature",
      "vendor",
      "asset",
      "ledger",
      "tax_form",
    ];
    const clientTools = [];
    for (const noun of nouns)
      for (const verb of verbs) {
        clientTools.push({
          name: `${noun}_${verb}`,
          description: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${noun.replace("_", " ")} records in the ${noun.replace("_", " ")} service.`,
          parameters: { type: "object", properties: { id: { type: "string" }, query: { type: "string" } } },
        });
      }
    expect(clientTools).toHaveLength(1000);
    const opened = await api("POST", `/v1/sessions/${session}/turns`, { clientTools });
    expect(opened.status).toBe(201);
    const surfaceBytes = JSON.stringify(opened.json.tools).length;
    expect(opened.json.tools.map((t: any) => t.name)).toEqual(["exec", "wait"]);
    expect(surfaceBytes).toBeLessThan(8 * 1024);
    expect(opened.json.telemetry.catalogSize).toBe(1005);

    const turnId = opened.json.turnId;
    const r = await exec(
      session,
      turnId,
      `const [tool] = await catalog.search("refund records: create one", { limit: 3 });
       const schema = await tool.describe();
       const result = await tool({ id: "R-1" });
       return { name: tool.toolName, params: Object.keys(schema.parameters.properties), result };`,
    );
    // The right tool is a client tool: calling it parks the cell for the client to run.
    expect(r.status).toBe("waiting");
    expect(r.pendingToolCalls).toEqual([{ callId: expect.any(String), tool: "refund_create", input: { id: "R-1" } }]);
    await api("POST", `/v1/sessions/${session}/turns/${turnId}/client-results`, { callId: r.pendingToolCalls[0].callId, value: { refunded: true } });
    const done = await wait(session, turnId, r.runId);
    expect(done).toMatchObject({ status: "completed", value: { name: "refund_create", params: ["id", "query"], result: { refunded: true } } });
    expect(done.telemetry.counters).toEqual({ search: 1, describe: 1, call: 1 });
  });
});

describe("lazy tool globals", () => {
  it("globals and catalog.all() share one handle per tool, made on first use; globals stay assignable", async () => {
    const { session, turnId } = await freshTurn();
    const r = await exec(
      session,
      turnId,
      `const same = catalog.all()[0] === shipping_list && catalog.all()[1] === shipping_get;
       shipping_get = 5;
       return { same, reassigned: shipping_get, frozen: Object.isFrozen(catalog.all()), name: shipping_list.callableName };`,
    );
    expect(r.value).toEqual({ same: true, reassigned: 5, frozen: true, name: "shipping_list" });
  });
});
