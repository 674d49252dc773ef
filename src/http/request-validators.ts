/**
 * The request validators, loaded on the first request that has a body to check. They and the zod
 * schemas they check with (request-schemas.ts, with zod and its OpenAPI extension) cost tens of
 * milliseconds of CPU to evaluate: loaded at module evaluation, every isolate paid them at startup,
 * including those that only serve `/healthz`, `/mcp` or a tool call. Only `loadValidators()`
 * imports them at run time (other modules keep `import type`), so the bundler keeps them behind a
 * lazy initializer.
 */
export const loadValidators = () => import("./validators");

export type Validators = Awaited<ReturnType<typeof loadValidators>>;
