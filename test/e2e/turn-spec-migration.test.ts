import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { exec, freshTurn, sessionProbe } from "./helpers";

// Schema 12 keeps a turn's spec (its catalog, mostly) in `turn_specs`, out of the turn row that every
// step updates. A session stored by an earlier build has the spec inside `turns`: its next
// incarnation moves it, and its turns go on as before.
describe("turn specs in a table of their own", () => {
  it("a session stored with the spec in its turn row (schema 11) is migrated when its object starts again", async () => {
    const { session, turnId } = await freshTurn();
    expect(await exec(session, turnId, "return 20 + 1")).toMatchObject({ status: "completed", value: 21 });
    const probe = sessionProbe(session);
    const [moved] = await probe.storageRows("SELECT spec FROM turn_specs WHERE turn_id = ?", turnId);
    expect(JSON.parse(String(moved!.spec))).toMatchObject({ turnId });
    const [row] = await probe.storageRows("SELECT spec FROM turns WHERE turn_id = ?", turnId);
    expect(row!.spec).toBe("");
    // As an earlier build left it: the whole spec (its catalog last) in the turn row, no turn_specs
    // or turn_catalogs table, version 11.
    await probe.storageWrite(
      "UPDATE turns SET spec = (SELECT json_set(s.spec, '$.catalog', json(c.json)) FROM turn_specs s JOIN turn_catalogs c ON c.digest = s.catalog WHERE s.turn_id = turns.turn_id)",
    );
    await probe.storageWrite("DROP TABLE turn_specs");
    await probe.storageWrite("DROP TABLE turn_catalogs");
    await probe.storageWrite("UPDATE schema_version SET version = 11");
    await abortAllDurableObjects();
    expect(await exec(session, turnId, "return 40 + 2")).toMatchObject({ status: "completed", value: 42 });
    const after = sessionProbe(session);
    expect((await after.storageRows("SELECT version FROM schema_version"))[0]).toEqual({ version: 14 });
    const [spec] = await after.storageRows("SELECT spec FROM turn_specs WHERE turn_id = ?", turnId);
    expect(JSON.parse(String(spec!.spec))).toMatchObject({ turnId });
    expect((await after.storageRows("SELECT spec FROM turns WHERE turn_id = ?", turnId))[0]).toEqual({ spec: "" });
  });

  it("deleting a turn deletes its spec", async () => {
    const { session, turnId } = await freshTurn();
    const other = await freshTurn();
    expect(await exec(session, turnId, "return 1")).toMatchObject({ status: "completed" });
    const { api } = await import("./helpers");
    expect((await api("DELETE", `/v1/sessions/${session}/turns/${turnId}`)).status).toBe(200);
    expect(await sessionProbe(session).storageRows("SELECT turn_id FROM turn_specs")).toEqual([]);
    expect((await sessionProbe(other.session).storageRows("SELECT turn_id FROM turn_specs")).map((r) => r.turn_id)).toEqual([other.turnId]);
  });
});
