import { NESTED_PREVIEW_BYTES } from "../../src/limits";
import { escapeDisguisingText, maskSecrets, redactedPreview } from "../../src/observability";
import type { ApprovalAnswer, ApprovalRequester } from "../../src/policy";
import { QuotaExceeded } from "../../src/quota";
import type { Sql } from "../sql";
import type { StorageQuota } from "./storage-quota";

import type { ApprovalsPort, LostApproval, PendingApproval } from "../../src/session";

export type { LostApproval, PendingApproval };

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

/** Settled approvals kept per turn (newest first) to answer a late decision with a conflict; older ones go. */
export const SETTLED_APPROVALS_KEPT = 64;
/** Bytes a decision's reason may take in its row (longer reasons are cut); counted when the row is written. */
const REASON_BYTES = 512;
/**
 * A row's bytes as counted on its turn (`turns.stored_bytes`, the session's quota): ids, times and
 * status, its text, and room for the decision's reason — so deciding never grows the session.
 */
const ROW_BASE_BYTES = 128 + REASON_BYTES;
const ROW_BYTES_SQL = `(${ROW_BASE_BYTES} + length(CAST(tool AS BLOB)) + length(CAST(input_preview AS BLOB)))`;
const utf8 = new TextEncoder();

/**
 * The session's operator approvals. A call that needs one is recorded (tool, a bounded redacted
 * preview of its input) and waits in memory for `decide`; the row is the record operators list and
 * decide on. A decision is consumed once (a second is a conflict) and belongs to that one call:
 * a later call of the same tool asks again. Fail closed everywhere: a timeout, a cancelled call
 * (turn deleted, client gone) or a restarted object (no waiter left) never allows anything.
 * Bounded: rows are written through the session's guarded write path and count against its
 * storage quota on their turn's row (a request the session cannot record fails closed, as
 * `cancelled`), and a turn keeps its newest SETTLED_APPROVALS_KEPT settled rows (pending ones are
 * bounded by the calls in flight).
 */
export class ApprovalBroker implements ApprovalsPort {
  private readonly waiters = new Map<string, (answer: ApprovalAnswer) => void>();

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
    private readonly ready: () => boolean,
    private readonly quota: StorageQuota,
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
        const preview = approvalPreview(input, redaction);
        try {
          this.quota.grow(
            scope.turnId,
            ROW_BASE_BYTES + utf8.encode(tool).length + utf8.encode(preview).length,
            () =>
              this.sql.run(
                "INSERT INTO approvals (approval_id, turn_id, tenant_id, tool, input_preview, call_id, parent_call_id, requested_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
                approvalId,
                scope.turnId,
                scope.tenantId,
                tool,
                preview,
                callId ?? null,
                scope.parentCallId ?? null,
                this.now(),
              ),
            "recording this approval request",
          );
        } catch (error) {
          // Not on record, so no operator can allow it: fail closed, saying why.
          if (error instanceof QuotaExceeded) return { decision: "cancelled", reason: error.message };
          throw error;
        }
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
    return (
      this.sql
        .all<Row>("SELECT * FROM approvals WHERE tenant_id = ? AND status = 'pending' ORDER BY requested_at, approval_id", tenantId)
        // The name as written (an MCP server's may hold a bidirectional override): shown escaped, like the preview.
        .map((r) => ({
          approvalId: r.approval_id,
          turnId: r.turn_id,
          tool: escapeDisguisingText(r.tool),
          inputPreview: r.input_preview,
          requestedAt: r.requested_at,
        }))
    );
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

  /** Settle a row in place: its reason fits the room counted when it was written (the session does not grow). */
  private close(approvalId: string, status: string, reason?: string): void {
    if (!this.ready()) return;
    this.sql.run(
      "UPDATE approvals SET status = ?, reason = ?, decided_at = ? WHERE approval_id = ?",
      status,
      reason === undefined ? null : fitBytes(reason.slice(0, 500), REASON_BYTES),
      this.now(),
      approvalId,
    );
    const turnId = this.sql.one<{ turn_id: string }>("SELECT turn_id FROM approvals WHERE approval_id = ?", approvalId)?.turn_id;
    if (turnId !== undefined) this.prune(turnId);
  }

  /** Drop the turn's settled rows past the newest SETTLED_APPROVALS_KEPT, giving back their bytes. */
  private prune(turnId: string): void {
    const old = this.sql.all<{ approval_id: string; b: number }>(
      `SELECT approval_id, ${ROW_BYTES_SQL} AS b FROM approvals WHERE turn_id = ? AND status != 'pending' ORDER BY decided_at DESC, approval_id DESC LIMIT -1 OFFSET ?`,
      turnId,
      SETTLED_APPROVALS_KEPT,
    );
    for (const { approval_id, b } of old) this.quota.grow(turnId, -b, () => this.sql.run("DELETE FROM approvals WHERE approval_id = ?", approval_id));
  }
}

/** `text` cut (on a character boundary) to at most `max` UTF-8 bytes. */
function fitBytes(text: string, max: number): string {
  if (utf8.encode(text).length <= max) return text;
  let out = "";
  let bytes = 0;
  for (const ch of text) {
    const n = utf8.encode(ch).length;
    if (bytes + n > max - 3) break;
    out += ch;
    bytes += n;
  }
  return `${out}…`;
}

/** How far a preview that does not fit whole is shortened: the first level whose preview fits the bound is used. */

type Level = { chars: number; keyChars: number; items: number; keys: number; depth: number };
const LEVELS: readonly Level[] = [
  { chars: 200, keyChars: 200, items: 20, keys: 50, depth: 4 },
  { chars: 80, keyChars: 64, items: 8, keys: 50, depth: 4 },
  { chars: 24, keyChars: 32, items: 3, keys: 50, depth: 3 },
  { chars: 8, keyChars: 16, items: 1, keys: 50, depth: 2 },
  { chars: 8, keyChars: 16, items: 1, keys: 50, depth: 1 },
  // Top-level keys only (values elided), fewer and fewer (a control character takes 6 bytes as JSON);
  // at the end only the count: the preview always fits whole, a key is never dropped unsaid.
  { chars: 8, keyChars: 12, items: 0, keys: 16, depth: 1 },
  { chars: 4, keyChars: 8, items: 0, keys: 8, depth: 1 },
  { chars: 0, keyChars: 8, items: 0, keys: 2, depth: 1 },
  { chars: 0, keyChars: 0, items: 0, keys: 0, depth: 1 },
];

/** `text` cut to `max` characters with a count of the rest (nothing is cut without saying so; never made longer). */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const shortened = `${text.slice(0, max)}…[${text.length - max} more characters]`;
  return shortened.length < text.length ? shortened : text;
}

/**
 * What the operator sees of a call to approve: the whole input, redacted (and its disguising
 * characters escaped) like any preview, whenever that fits NESTED_PREVIEW_BYTES — nothing is cut
 * below the bound. Only a larger input is shortened, and then never silently: a hostile caller
 * may pad one field to push the one that matters (recipient, amount) out of view, so strings
 * (after their secrets are masked), key names and lists are shortened level by level, evenly
 * across the input, until the whole fits; past the last level keys are dropped with an explicit
 * "N more keys" marker.
 */
export function approvalPreview(input: unknown, redaction: { secrets: readonly string[]; patterns: readonly RegExp[] }): string {
  const clip = (v: unknown, depth: number, level: Level): unknown => {
    if (typeof v === "string") return cut(maskSecrets(v, redaction), level.chars);
    if (v === null || typeof v !== "object") return v;
    if (depth >= level.depth) return "[…]";
    if (Array.isArray(v)) {
      const items = v.slice(0, level.items).map((x) => clip(x, depth + 1, level));
      return v.length > level.items ? [...items, `…[${v.length - level.items} more items]`] : items;
    }
    const out: Record<string, unknown> = {};
    // Own data properties only ("__proto__" included), and a cut name that collides with another gets a number.
    const put = (name: string, value: unknown) => {
      let key = name;
      for (let n = 2; Object.hasOwn(out, key); n++) key = `${name} #${n}`;
      Object.defineProperty(out, key, { value, enumerable: true, configurable: true, writable: true });
    };
    const keys = Object.keys(v);
    for (const k of keys.slice(0, level.keys))
      put(cut(maskSecrets(k, redaction), level.keyChars), clip((v as Record<string, unknown>)[k], depth + 1, level));
    if (keys.length > level.keys) put("…", `${keys.length - level.keys} more keys`);
    return out;
  };
  let preview = redactedPreview(input, NESTED_PREVIEW_BYTES, redaction);
  if (!preview.endsWith(" bytes omitted]")) return preview;
  for (const level of LEVELS) {
    preview = redactedPreview(clip(input, 0, level), NESTED_PREVIEW_BYTES, redaction);
    if (!preview.endsWith(" bytes omitted]")) return preview;
  }
  return preview;
}
