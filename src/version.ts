/** Reported by `/healthz`; keep in step with package.json. */
export const VERSION = "0.1.0";
