/**
 * The sub-agents a parent turn has running in this isolate, by parent turn id (a random UUID, so
 * unique across the session objects an isolate hosts). Deleting the parent turn cancels them; a
 * background child (`sessions_spawn` without `wait`) is found here by `agents_wait`.
 */
export type RunningChild = { sessionId: string; done: Promise<unknown>; cancel: () => void };

const byTurn = new Map<string, Map<string, RunningChild>>();

export function trackChild(turnId: string, child: RunningChild): () => void {
  let children = byTurn.get(turnId);
  if (!children) byTurn.set(turnId, (children = new Map()));
  children.set(child.sessionId, child);
  return () => {
    const now = byTurn.get(turnId);
    if (now?.get(child.sessionId) !== child) return;
    now.delete(child.sessionId);
    if (now.size === 0) byTurn.delete(turnId);
  };
}

export function runningChild(turnId: string, sessionId: string): RunningChild | undefined {
  return byTurn.get(turnId)?.get(sessionId);
}

/** The parent turn was deleted (or its session): cancel its children, best effort (an RPC each). */
export function cancelChildren(turnId: string): void {
  const children = byTurn.get(turnId);
  if (!children) return;
  byTurn.delete(turnId);
  for (const child of children.values()) child.cancel();
}
