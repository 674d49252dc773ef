/** The workerd lines a green run produces by design (workerd-log-filter.mjs). */
export const EXPECTED_WORKERD_LINES: RegExp[];
/** Is `chunk` one of the expected workerd lines? */
export function isExpectedWorkerdLine(chunk: unknown): boolean;
/** Routes the expected workerd lines from stdout/stderr to `file` (default .wrangler/test-logs/workerd-expected.log). */
export function routeExpectedWorkerdLines(file?: string): void;
