import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { mark, recordsSince } from "../support/log-capture";
import { api, exec, expectHealthy, openTurn, sessionId, sessionProbe, withInlineCatalogs } from "./helpers";

// Schema 14 stores a turn's catalog (its tools' names, descriptions and schemas: most of a turn's
// bytes) once per session, in `turn_catalogs` under its SHA-256, shared by the turns that have it;
// `turn_specs` keeps each turn's own fields and the digest. Every read after a restart goes through
// storage (the parsed turns in memory are gone), so the cells below prove each turn reads its own
// catalog back whole.

const ASK = { clientTools: [{ name: "ask_user", description: "Ask the user" }] };
/** What a cell sees of its turn's catalog: search results and which tools are globals. */
const SEEN = "return [JSON.stringify(await catalog.search('note')), typeof notes_write, typeof ask_user, await echo({ value: 'hi' })];";

async function seen(session: string, turnId: string): Promise<unknown[]> {
  const r = await exec(session, turnId, SEEN);
  expect(r).toMatchObject({ status: "completed" });
  return r.value;
}

async function catalogs(session: string): Promise<{ digest: string; bytes: number }[]> {
  return (await sessionProbe(session).storageRows(
    "SELECT digest, length(CAST(json AS BLOB)) AS bytes FROM turn_catalogs ORDER BY digest",
  )) as unknown as { digest: string; bytes: number }[];
}

async function specs(session: string): Promise<Record<string, { catalog: string | null; bytes: number }>> {
  const rows = await sessionProbe(session).storageRows("SELECT turn_id, catalog, length(CAST(spec AS BLOB)) AS bytes FROM turn_specs");
  return Object.fromEntries(rows.map((r) => [String(r.turn_id), { catalog: r.catalog as string | null, bytes: Number(r.bytes) }]));
}

async function deleteTurn(session: string, turnId: string): Promise<void> {
  expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
}

describe("a session stores each catalog once", () => {
  it("turns opened alike share one catalog row; each reads it whole after a restart; it goes with the last of them", async () => {
    const session = sessionId();
    const a = await openTurn(session);
    const b = await openTurn(session);
    const before = await seen(session, a);
    expect(before.slice(1, 3)).toEqual(["function", "undefined"]);
    expect(JSON.parse(String(before[0])).length).toBeGreaterThan(0);

    const [stored] = await catalogs(session);
    expect(await catalogs(session)).toHaveLength(1);
    expect(stored!.digest).toMatch(/^[0-9a-f]{64}$/);
    const own = await specs(session);
    expect(own[a]!.catalog).toBe(stored!.digest);
    expect(own[b]!.catalog).toBe(stored!.digest);
    // Each turn's row holds its own fields only: the catalog is many times its size.
    expect(own[a]!.bytes).toBeLessThan(stored!.bytes / 4);

    await abortAllDurableObjects();
    expect(await seen(session, a)).toEqual(before);
    expect(await seen(session, b)).toEqual(before);

    await deleteTurn(session, a);
    expect(await catalogs(session)).toEqual([stored]);
    await abortAllDurableObjects();
    expect(await seen(session, b)).toEqual(before);
    await deleteTurn(session, b);
    expect(await catalogs(session)).toEqual([]);
  });

  it("a turn with other tools gets a catalog row of its own, and neither turn reads the other's", async () => {
    const session = sessionId();
    const plain = await openTurn(session);
    const asking = await openTurn(session, ASK);
    expect(await catalogs(session)).toHaveLength(2);
    const own = await specs(session);
    expect(own[plain]!.catalog).not.toBe(own[asking]!.catalog);
    await abortAllDurableObjects();
    expect((await exec(session, plain, "return typeof ask_user")).value).toBe("undefined");
    expect((await exec(session, asking, "return typeof ask_user")).value).toBe("function");
    // Deleting one turn leaves the other's catalog alone.
    await deleteTurn(session, asking);
    expect((await catalogs(session)).map((c) => c.digest)).toEqual([own[plain]!.catalog]);
    await expectHealthy(session, plain);
  });

  it("a turn whose catalog row is gone is an unknown turn, not a crash: the session's other turns go on", async () => {
    const session = sessionId();
    const lost = await openTurn(session, ASK);
    const kept = await openTurn(session);
    const own = await specs(session);
    await sessionProbe(session).storageWrite("DELETE FROM turn_catalogs WHERE digest = ?", own[lost]!.catalog!);
    await abortAllDurableObjects();
    const from = mark();
    const r = await api("POST", `/v1/sessions/${session}/turns/${lost}/tools/exec`, { code: "return 1" });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("not_found");
    // Not silent: the operator's log says why the turn is gone.
    expect(recordsSince(from).some((l) => l.kind === "host_error" && l.where === "turn.catalog_missing" && l.turnId === lost)).toBe(true);
    await expectHealthy(session, kept);
  });

  it("a catalog whose digest cannot be computed is stored inline with its turn, which works as any other", async () => {
    const session = sessionId();
    // A catalog no earlier turn of this isolate had (digests are kept per catalog).
    const tools = { clientTools: [{ name: `ask_${crypto.randomUUID().slice(0, 8)}`, description: "Ask the user" }] };
    const from = mark();
    const digest = crypto.subtle.digest;
    crypto.subtle.digest = () => Promise.reject(new Error("digest unavailable"));
    let turnId: string;
    try {
      turnId = await openTurn(session, tools);
    } finally {
      crypto.subtle.digest = digest;
    }
    expect((await specs(session))[turnId]!.catalog).toBeNull();
    expect(await catalogs(session)).toEqual([]);
    expect(recordsSince(from).some((r) => r.kind === "host_error" && r.where === "turn.catalog_digest")).toBe(true);
    await abortAllDurableObjects();
    expect((await seen(session, turnId)).slice(1, 3)).toEqual(["function", "undefined"]);
  });

  it("a session stored before schema 14 (catalogs inline in each spec) is migrated: its turns read as before, new turns share catalogs", async () => {
    const session = sessionId();
    const old = await openTurn(session);
    const before = await seen(session, old);
    await withInlineCatalogs(session);
    await sessionProbe(session).storageWrite("UPDATE schema_version SET version = 13");
    await abortAllDurableObjects();

    expect(await seen(session, old)).toEqual(before);
    expect((await sessionProbe(session).storageRows("SELECT version FROM schema_version"))[0]).toEqual({ version: 14 });
    expect((await specs(session))[old]!.catalog).toBeNull();
    const fresh = await openTurn(session);
    expect(await catalogs(session)).toHaveLength(1);
    await deleteTurn(session, old);
    expect(await catalogs(session)).toHaveLength(1);
    await abortAllDurableObjects();
    expect(await seen(session, fresh)).toEqual(before);
  });
});
