/** The public surface of src/bridge (other folders import from here). */
export * from "./host-bridge";
export * from "./json-depth";
