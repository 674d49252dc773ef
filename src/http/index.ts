/** The public surface of src/http (other folders import from here). */
export * from "./app";
export * from "./auth";

export * from "./json-body";
export * from "./validate-client-tool";
export * from "./validate-turn";
