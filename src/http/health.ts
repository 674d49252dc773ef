import type { Activation } from "../config";

/** `GET /healthz`: the runtime, the version, and code mode for a turn that names no agent or model (no secrets). */
export type HealthAnswer = {
  ok: true;
  runtime: "quickjs-wasi";
  version: string;
  codeMode?: { enabled: Activation["enabled"]; engagedForDefault: boolean; source: Activation["source"] };
};
