/** The public surface of src/code-mode (other folders import from here). */
export * from "./output-budget";
export * from "./output-budget-utf8";
export * from "./types";
export * from "./bounded-json";
