/**
 * The session object was reset under a call (the platform's CPU or memory limit, or a deploy).
 * One wording for every place that reports it; each caller adds what it means for its call
 * (retry, continue the turn, inspect state).
 */
const CAUSE = "the platform's CPU or memory limit, or a deploy";

export type ResetMoment = "during this call" | "before this call started" | { while: string };

/** "the session was reset during this call", "… while exec ran": what a caller of the Worker reads. */
export function sessionResetMessage(moment: ResetMoment): string {
  return `the session was reset ${typeof moment === "string" ? moment : `while ${moment.while} ran`}`;
}

/** "the session object was reset while this exec ran (the platform's …)": a record naming the cause. */
export function objectResetMessage(what?: string): string {
  return `the session object was reset${what !== undefined ? ` while this ${what} ran` : ""} (${CAUSE})`;
}
