/** The public surface of src/runs (other folders import from here). */
export * from "./run-id";
export * from "./run-lifecycle";
export * from "./messages";
export type { DeliveryRefusal } from "./deliver";
