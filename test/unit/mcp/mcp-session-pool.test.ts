import { describe, expect, it } from "vitest";
import type { McpClient } from "../../../src/mcp/mcp-client";
import type { McpTarget } from "../../../src/mcp/mcp-config";
import type { McpOutcome } from "../../../src/mcp/mcp-errors";
import { MCP_MAX_SESSIONS, MCP_SESSION_IDLE_MS, McpSessionPool, type McpSchedule } from "../../../src/mcp/mcp-session-pool";

// The MCP session pool's bounds with a fake client (no server, no workerd): the session cap and
// its LRU close, the one-off client when every session is busy, the idle close by a hand-moved clock.

type FakeClient = { id: number; usable: boolean; closed: boolean; close(): Promise<void> };

function fakes() {
  const made: FakeClient[] = [];
  const connect = async (): Promise<McpOutcome<McpClient>> => {
    const client: FakeClient = {
      id: made.length,
      usable: true,
      closed: false,
      async close() {
        this.closed = true;
        this.usable = false;
      },
    };
    made.push(client);
    return { ok: true, value: client as unknown as McpClient };
  };
  return { made, connect };
}

/** A clock the test moves: timers fire when `advance` passes their time. */
function manualClock() {
  let now = 0;
  const timers = new Set<{ at: number; fn: () => void }>();
  const schedule: McpSchedule = (fn, ms) => {
    const t = { at: now + ms, fn };
    timers.add(t);
    return () => timers.delete(t);
  };
  return {
    schedule,
    pending: () => timers.size,
    advance(ms: number) {
      now += ms;
      for (const t of [...timers]) if (t.at <= now) (timers.delete(t), t.fn());
    },
  };
}

const target = (n: number): McpTarget => ({ server: `s${n}`, url: new URL(`https://mcp${n}.example/mcp`), headers: {} });
const opts = { timeoutMs: 5_000 };

/** One operation on server `n` that returns which fake client ran it. */
const use = (pool: McpSessionPool, n: number) =>
  pool.run(`key${n}`, target(n), "read", opts, async (client) => ({ ok: true, value: (client as unknown as FakeClient).id }));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("McpSessionPool bounds", () => {
  it("reuses one session per server identity", async () => {
    const { made, connect } = fakes();
    const pool = new McpSessionPool({ connect, schedule: manualClock().schedule });
    expect(await use(pool, 1)).toEqual({ ok: true, value: 0 });
    expect(await use(pool, 1)).toEqual({ ok: true, value: 0 });
    expect(made).toHaveLength(1);
    expect(pool.connects).toBe(1);
  });

  it(`holds at most ${MCP_MAX_SESSIONS} sessions: a new server closes the least recently used idle one`, async () => {
    const { made, connect } = fakes();
    const pool = new McpSessionPool({ connect, schedule: manualClock().schedule });
    for (let n = 0; n < MCP_MAX_SESSIONS; n++) await use(pool, n);
    // Server 0 is used again: server 1 is now the least recently used.
    await use(pool, 0);
    await use(pool, 100);
    expect(pool.size).toBe(MCP_MAX_SESSIONS);
    expect(made.filter((c) => c.closed).map((c) => c.id)).toEqual([1]);
    // Server 0 kept its session; server 1 connects anew.
    expect(await use(pool, 0)).toEqual({ ok: true, value: 0 });
    expect(await use(pool, 1)).toEqual({ ok: true, value: MCP_MAX_SESSIONS + 1 });
    expect(made.filter((c) => c.closed).map((c) => c.id)).toEqual([1, 2]);
  });

  it("when every session is busy, an operation on a new server runs on a client of its own, closed after it", async () => {
    const { made, connect } = fakes();
    const pool = new McpSessionPool({ connect, schedule: manualClock().schedule });
    const gate = deferred();
    const busy = Array.from({ length: MCP_MAX_SESSIONS }, (_, n) =>
      pool.run(`key${n}`, target(n), "call", opts, async () => (await gate.promise, { ok: true, value: n })),
    );
    // Let every busy operation connect and start.
    while (made.length < MCP_MAX_SESSIONS) await new Promise((r) => setTimeout(r, 0));
    const extra = await use(pool, 99);
    expect(extra).toEqual({ ok: true, value: MCP_MAX_SESSIONS });
    const oneOff = made[MCP_MAX_SESSIONS]!;
    expect(oneOff.closed).toBe(true);
    // No busy session was closed for it, and the pool did not grow.
    expect(made.slice(0, MCP_MAX_SESSIONS).some((c) => c.closed)).toBe(false);
    expect(pool.size).toBe(MCP_MAX_SESSIONS);
    gate.resolve();
    expect((await Promise.all(busy)).map((r) => r.ok)).toEqual(Array(MCP_MAX_SESSIONS).fill(true));
  });

  it(`closes a session idle for ${MCP_SESSION_IDLE_MS / 1000} s, by the injected clock; use in between restarts the wait`, async () => {
    const { made, connect } = fakes();
    const clock = manualClock();
    const pool = new McpSessionPool({ connect, schedule: clock.schedule });
    await use(pool, 1);
    clock.advance(MCP_SESSION_IDLE_MS - 1);
    await use(pool, 1);
    clock.advance(MCP_SESSION_IDLE_MS - 1);
    expect(made[0]!.closed).toBe(false);
    expect(pool.size).toBe(1);
    clock.advance(1);
    expect(made[0]!.closed).toBe(true);
    expect(pool.size).toBe(0);
    expect(clock.pending()).toBe(0);
    // The next operation connects a new session.
    expect(await use(pool, 1)).toEqual({ ok: true, value: 1 });
  });

  it("never closes a busy session for idleness", async () => {
    const { made, connect } = fakes();
    const clock = manualClock();
    const pool = new McpSessionPool({ connect, schedule: clock.schedule });
    const gate = deferred();
    const running = pool.run("key1", target(1), "call", opts, async () => (await gate.promise, { ok: true, value: 1 }));
    while (made.length < 1) await new Promise((r) => setTimeout(r, 0));
    clock.advance(10 * MCP_SESSION_IDLE_MS);
    expect(made[0]!.closed).toBe(false);
    gate.resolve();
    await running;
    clock.advance(MCP_SESSION_IDLE_MS);
    expect(made[0]!.closed).toBe(true);
  });

  it("closeAll closes every session and cancels their idle timers", async () => {
    const { made, connect } = fakes();
    const clock = manualClock();
    const pool = new McpSessionPool({ connect, schedule: clock.schedule });
    await use(pool, 1);
    await use(pool, 2);
    await pool.closeAll();
    expect(made.every((c) => c.closed)).toBe(true);
    expect(clock.pending()).toBe(0);
    expect(pool.size).toBe(0);
  });
});
