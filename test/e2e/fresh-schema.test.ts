import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { exec, freshTurn, openTurn, sessionProbe } from "./helpers";

// A new session creates its tables as they are now, in one step; a session stored by an earlier
// build runs the migrations past its version. Both must end in the same layout: the same tables,
// columns (order, types, defaults, keys), indexes and table options.

type Layout = Record<string, unknown>;

async function layout(session: string): Promise<Layout> {
  const probe = sessionProbe(session);
  const objects = await probe.storageRows(
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_autoindex%' ESCAPE '\\' ORDER BY type, name",
  );
  const out: Layout = {};
  for (const o of objects) {
    const name = String(o.name);
    if (o.type === "table") {
      const sql = String(o.sql ?? "");
      out[`table ${name}`] = {
        columns: await probe.storageRows('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid', name),
        // Every index, the automatic ones of UNIQUE and PRIMARY KEY constraints too, with its columns in order.
        indexes: await Promise.all(
          (await probe.storageRows('SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name', name)).map(async (index) => ({
            ...index,
            columns: await probe.storageRows(
              'SELECT seqno, cid, name, "desc", coll, "key" FROM pragma_index_xinfo(?) ORDER BY seqno',
              String(index.name),
            ),
          })),
        ),
        withoutRowid: /WITHOUT\s+ROWID\s*$/i.test(sql),
        autoincrement: /AUTOINCREMENT/i.test(sql),
      };
    } else if (o.type === "index") {
      out[`index ${name}`] = {
        table: o.tbl_name,
        columns: await probe.storageRows("SELECT seqno, name FROM pragma_index_info(?) ORDER BY seqno", name),
      };
    } else out[`${o.type} ${name}`] = o.tbl_name;
  }
  return out;
}

describe("a new session's schema", () => {
  it("is the layout the migrations build, created without replaying them", async () => {
    const { session: created } = await freshTurn();
    const { session: migrated } = await freshTurn();
    // The second session as a build from before schema versions left it: nothing but an empty version table.
    const probe = sessionProbe(migrated);
    const ours = await probe.storageRows(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
    );
    for (const t of ours) await probe.storageWrite(`DROP TABLE ${String(t.name)}`);
    await probe.storageWrite("CREATE TABLE schema_version (version INTEGER NOT NULL)");
    await abortAllDurableObjects();
    // Its next incarnation runs every migration from the first.
    const turnId = await openTurn(migrated);
    expect(await exec(migrated, turnId, "return 6 * 7")).toMatchObject({ status: "completed", value: 42 });
    expect(await sessionProbe(migrated).storageRows("SELECT version FROM schema_version")).toEqual([{ version: 14 }]);

    const fresh = await layout(created);
    expect(Object.keys(fresh)).toContain("table open_calls");
    expect(fresh["table open_calls"]).toMatchObject({ withoutRowid: true });
    expect(fresh["table trajectory"]).toMatchObject({ autoincrement: false });
    expect(await layout(migrated)).toEqual(fresh);
    expect(await sessionProbe(created).storageRows("SELECT version FROM schema_version")).toEqual([{ version: 14 }]);
  });
});
