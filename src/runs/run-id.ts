/**
 * Run ids carry a random tag of their session so a `wait` in the wrong session can say so
 * (seed: "code mode run belongs to a different session.") without a global registry, and
 * without deriving anything from tenant or session ids.
 */
export function newSessionTag(): string {
  return crypto.randomUUID().replace(/-/g, "").slice(0, 12);
}

export function newRunId(sessionTag: string): string {
  return `cm_${sessionTag}_${crypto.randomUUID().replace(/-/g, "")}`;
}

export function runIdScope(runId: string, sessionTag: string): "mine" | "other-session" | "malformed" {
  const m = /^cm_([0-9a-f]{12})_[0-9a-f]{32}$/.exec(runId);
  if (!m) return "malformed";
  return m[1] === sessionTag ? "mine" : "other-session";
}
