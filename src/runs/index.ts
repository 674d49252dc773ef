/** The public surface of src/runs (other folders import from here). */
export { newSessionTag, newRunId, runIdScope } from "./run-id";
export { RunLifecycle, type CellEnvFactory, type RunDeps } from "./run-lifecycle";
export { RUN_UNAVAILABLE, RUN_OTHER_SESSION, TOO_MANY_SUSPENDED, WAIT_IN_FLIGHT, RUN_OTHER_TURN, RUN_INTERRUPTED } from "./messages";
export type { DeliveryRefusal } from "./deliver";
export type { RunStore, RunCodec } from "./run-context";
