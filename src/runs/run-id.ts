import { fnv1a64 } from "../catalog/opaque-id";

/**
 * Run ids carry a short tag of their session so a `wait` in the wrong session can say so
 * (seed: "code mode run belongs to a different session.") without a global registry.
 */
export function sessionTag(tenantId: string, sessionId: string): string {
  return fnv1a64(`${tenantId}\u0000${sessionId}`).slice(0, 12);
}

export function newRunId(tenantId: string, sessionId: string): string {
  return `cm_${sessionTag(tenantId, sessionId)}_${crypto.randomUUID().replace(/-/g, "")}`;
}

/** "mine" | "other-session" | "malformed" */
export function runIdScope(runId: string, tenantId: string, sessionId: string): "mine" | "other-session" | "malformed" {
  const m = /^cm_([0-9a-f]{12})_[0-9a-f]{32}$/.exec(runId);
  if (!m) return "malformed";
  return m[1] === sessionTag(tenantId, sessionId) ? "mine" : "other-session";
}
