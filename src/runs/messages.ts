/** The seed's exact strings (matched verbatim by clients and tests). */
export const RUN_UNAVAILABLE = "code mode run is unavailable or expired.";
export const RUN_OTHER_SESSION = "code mode run belongs to a different session.";
export const TOO_MANY_SUSPENDED = "too many suspended code mode runs.";
export const WAIT_IN_FLIGHT = "a wait is already in flight for this code mode run.";
/** Same session, another turn's run (the seed's scope rule; its wording names the turn). */
export const RUN_OTHER_TURN = "code mode run belongs to a different turn.";
/** A resume began and never finished (the object was reset mid-wait); replaying could repeat side effects. */
export const RUN_INTERRUPTED =
  "code mode run was interrupted while resuming; what it did after its last snapshot is unknown, so it cannot be resumed. Inspect state before retrying.";
