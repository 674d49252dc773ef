/** The public surface of src/turns (other folders import from here). */
export * from "./quick-index";
export * from "./run-tool";
export * from "./surface";
export * from "./telemetry";
export * from "./tool-handlers";
export * from "./turn-spec";
export * from "./surface-check";
export * from "./tool-search-run";
export * from "./mcp-runtime";
export * from "./nested-activity";
