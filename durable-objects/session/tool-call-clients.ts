import type { StorageQuota } from "./storage-quota";
import type { Sql } from "../sql";
import type { ToolCallClient, ToolCallClientsPort } from "../../src/session";

const utf8 = new TextEncoder();

/**
 * Pending client calls of `tool_call` (mode "tools"), one row each, until the caller posts the
 * result: they have no parked run to live in, over `/v1` or `/chat` alike. Rows count against the
 * session's quota on their turn's row and go with the turn.
 */
export class ToolCallClients implements ToolCallClientsPort {
  constructor(
    private readonly sql: Sql,
    private readonly ready: () => boolean,
    private readonly quota: StorageQuota,
  ) {}

  count(turnId: string): number {
    if (!this.ready()) return 0;
    return this.sql.one<{ n: number }>("SELECT COUNT(*) AS n FROM tool_call_clients WHERE turn_id = ?", turnId)?.n ?? 0;
  }

  /** Stored only while the turn exists (it may have been deleted while policy decided). */
  add(call: ToolCallClient): boolean {
    if (!this.ready() || this.sql.one("SELECT 1 AS x FROM turns WHERE turn_id = ?", call.turnId) === undefined) return false;
    const input = JSON.stringify(call.input ?? {});
    const bytes = utf8.encode(input).length + call.tool.length + call.callId.length + call.parentCallId.length;
    // Through the session's guarded write path: refused (QuotaExceeded) before anything is stored.
    this.quota.grow(
      call.turnId,
      bytes,
      () =>
        this.sql.run(
          "INSERT INTO tool_call_clients (turn_id, call_id, parent_call_id, tool, input, decision, started_at, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
          call.turnId,
          call.callId,
          call.parentCallId,
          call.tool,
          input,
          call.decision,
          call.startedAt,
          bytes,
        ),
      "a client call handed out by tool_call",
    );
    return true;
  }

  get(turnId: string, callId: string): ToolCallClient | undefined {
    if (!this.ready()) return undefined;
    const row = this.sql.one<{ parent_call_id: string; tool: string; input: string; decision: string; started_at: number }>(
      "SELECT parent_call_id, tool, input, decision, started_at FROM tool_call_clients WHERE turn_id = ? AND call_id = ?",
      turnId,
      callId,
    );
    if (!row) return undefined;
    return {
      turnId,
      callId,
      parentCallId: row.parent_call_id,
      tool: row.tool,
      input: JSON.parse(row.input) as unknown,
      decision: row.decision,
      startedAt: row.started_at,
    };
  }

  /** The call was answered: its row goes, and its bytes are given back. */
  settle(turnId: string, callId: string): void {
    const row = this.sql.one<{ bytes: number }>("SELECT bytes FROM tool_call_clients WHERE turn_id = ? AND call_id = ?", turnId, callId);
    if (!row) return;
    this.quota.grow(turnId, -row.bytes, () => this.sql.run("DELETE FROM tool_call_clients WHERE turn_id = ? AND call_id = ?", turnId, callId));
  }

  deleteTurn(turnId: string): void {
    if (this.ready()) this.sql.run("DELETE FROM tool_call_clients WHERE turn_id = ?", turnId);
  }
}
