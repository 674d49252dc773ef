import { NESTED_PREVIEW_BYTES } from "../../src/limits";
import { maskSecrets, redactedPreview } from "../../src/observability";
import type { ApprovalAnswer, ApprovalRequester } from "../../src/policy";
import type { Sql } from "./sql";

export type PendingApproval = { approvalId: string; turnId: string; tool: string; inputPreview: string; requestedAt: number };

export type Decision = { decision: "allow" | "deny"; reason?: string };

type Row = {
  approval_id: string;
  turn_id: string;
  tenant_id: string;
  tool: string;
  input_preview: string;
  call_id: string | null;
  parent_call_id: string | null;
  requested_at: number;
  status: string;
};

/** An approval whose waiting call died with an earlier incarnation of the object. */
export type LostApproval = {
  approvalId: string;
  tenantId: string;
  turnId: string;
  tool: string;
  inputPreview: string;
  /** The call it was asked for (absent: the outer call itself, e.g. exec's own approval). */
  callId?: string;
  /** The outer call it was asked under (absent in rows of older builds). */
  parentCallId?: string;
  requestedAt: number;
};

/**
 * The session's operator approvals. A call that needs one is recorded (tool, a bounded redacted
 * preview of its input) and waits in memory for `decide`; the row is the record operators list and
 * decide on. A decision is consumed once (a second is a conflict) and belongs to that one call:
 * a later call of the same tool asks again. Fail closed everywhere: a timeout, a cancelled call
 * (turn deleted, client gone) or a restarted object (no waiter left) never allows anything.
 */
export class ApprovalBroker {
  private readonly waiters = new Map<string, (answer: ApprovalAnswer) => void>();

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
    private readonly ready: () => boolean,
  ) {}

  /** A new incarnation of the object: pending rows lost their waiting call (it failed with the reset). Returns them. */
  init(): LostApproval[] {
    const rows = this.sql.all<Row>("SELECT * FROM approvals WHERE status = 'pending' ORDER BY requested_at, approval_id");
    this.sql.run("UPDATE approvals SET status = 'lost', decided_at = ? WHERE status = 'pending'", this.now());
    return rows.map((r) => ({
      approvalId: r.approval_id,
      tenantId: r.tenant_id,
      turnId: r.turn_id,
      tool: r.tool,
      inputPreview: r.input_preview,
      ...(r.call_id !== null ? { callId: r.call_id } : {}),
      ...(r.parent_call_id !== null ? { parentCallId: r.parent_call_id } : {}),
      requestedAt: r.requested_at,
    }));
  }

  requester(
    /** `parentCallId`: the outer call the requests are made under (the trajectory shows a lost one there). */
    scope: { tenantId: string; turnId: string; parentCallId?: string },
    redaction: { secrets: readonly string[]; patterns: readonly RegExp[] },
    /** False once the turn (or the whole session) is gone: nothing is recorded, the call is cancelled. */
    turnExists: () => boolean = () => true,
  ): ApprovalRequester {
    return {
      request: async ({ tool, input, callId, signal, timeoutMs }) => {
        if (signal.aborted || !this.ready() || !turnExists()) return { decision: "cancelled", reason: "the turn is gone" };
        const approvalId = `appr_${crypto.randomUUID()}`;
        this.sql.run(
          "INSERT INTO approvals (approval_id, turn_id, tenant_id, tool, input_preview, call_id, parent_call_id, requested_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
          approvalId,
          scope.turnId,
          scope.tenantId,
          tool,
          approvalPreview(input, redaction),
          callId ?? null,
          scope.parentCallId ?? null,
          this.now(),
        );
        return new Promise<ApprovalAnswer>((resolve) => {
          const finish = (answer: ApprovalAnswer, status?: string) => {
            if (!this.waiters.has(approvalId)) return;
            this.waiters.delete(approvalId);
            clearTimeout(timer);
            signal.removeEventListener("abort", onAbort);
            if (status) this.close(approvalId, status, answer.decision === "cancelled" ? answer.reason : undefined);
            resolve(answer);
          };
          const onAbort = () => finish({ decision: "cancelled", reason: "the call was cancelled (turn deleted or caller gone)" }, "cancelled");
          const timer = setTimeout(() => finish({ decision: "timeout" }, "timed_out"), timeoutMs);
          this.waiters.set(approvalId, (answer) => finish(answer));
          if (signal.aborted) onAbort();
          else signal.addEventListener("abort", onAbort, { once: true });
        });
      },
    };
  }

  list(tenantId: string): PendingApproval[] {
    if (!this.ready()) return [];
    return this.sql
      .all<Row>("SELECT * FROM approvals WHERE tenant_id = ? AND status = 'pending' ORDER BY requested_at, approval_id", tenantId)
      .map((r) => ({ approvalId: r.approval_id, turnId: r.turn_id, tool: r.tool, inputPreview: r.input_preview, requestedAt: r.requested_at }));
  }

  /** `not_found` (unknown, another tenant's), `conflict` (decided, timed out, cancelled or lost already), or decided now. */
  decide(tenantId: string, approvalId: string, d: Decision): { ok: true } | { ok: false; reason: "not_found" | "conflict"; message: string } {
    const row = this.ready() ? this.sql.one<Row>("SELECT * FROM approvals WHERE approval_id = ? AND tenant_id = ?", approvalId, tenantId) : undefined;
    if (!row) return { ok: false, reason: "not_found", message: "unknown approval" };
    const waiter = this.waiters.get(approvalId);
    if (row.status !== "pending" || !waiter) {
      const why = row.status === "pending" ? "lost: the session restarted and its call failed closed" : row.status;
      return { ok: false, reason: "conflict", message: `approval ${approvalId} is no longer pending (${why}); a decision is consumed once` };
    }
    this.close(approvalId, d.decision === "allow" ? "allowed" : "denied", d.reason);
    waiter(d.decision === "allow" ? { decision: "allow" } : { decision: "deny", ...(d.reason ? { reason: d.reason } : {}) });
    return { ok: true };
  }

  deleteTurn(turnId: string): void {
    this.sql.run("DELETE FROM approvals WHERE turn_id = ?", turnId);
  }

  private close(approvalId: string, status: string, reason?: string): void {
    this.sql.run(
      "UPDATE approvals SET status = ?, reason = ?, decided_at = ? WHERE approval_id = ?",
      status,
      reason?.slice(0, 500) ?? null,
      this.now(),
      approvalId,
    );
  }
}

const FIELD_CHARS = 200;
const LIST_ITEMS = 20;
const OBJECT_KEYS = 50;
const DEPTH = 4;

/**
 * What the operator sees of a call to approve: every key stays visible (each string is cut on its
 * own, after its secrets were masked, so a long field cannot push the one that matters out of the
 * preview), then the whole is redacted and bounded like any preview.
 */
export function approvalPreview(input: unknown, redaction: { secrets: readonly string[]; patterns: readonly RegExp[] }): string {
  const clip = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") {
      const masked = maskSecrets(v, redaction);
      return masked.length > FIELD_CHARS ? `${masked.slice(0, FIELD_CHARS)}…[${masked.length - FIELD_CHARS} more characters]` : masked;
    }
    if (v === null || typeof v !== "object") return v;
    if (depth >= DEPTH) return "[…]";
    if (Array.isArray(v)) {
      const items = v.slice(0, LIST_ITEMS).map((x) => clip(x, depth + 1));
      return v.length > LIST_ITEMS ? [...items, `…[${v.length - LIST_ITEMS} more items]`] : items;
    }
    const out: Record<string, unknown> = {};
    const keys = Object.keys(v);
    for (const k of keys.slice(0, OBJECT_KEYS)) out[k] = clip((v as Record<string, unknown>)[k], depth + 1);
    if (keys.length > OBJECT_KEYS) out["…"] = `${keys.length - OBJECT_KEYS} more keys`;
    return out;
  };
  return redactedPreview(clip(input, 0), NESTED_PREVIEW_BYTES, redaction);
}
