export * from "./budget-pause";
export * from "./tool-call-policy";
export * from "./exec-hooks";
