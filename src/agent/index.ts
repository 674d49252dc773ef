export * from "./agent-loop";
export * from "./chat-events";
export * from "./chat-state";
export * from "./model-result";
export * from "./trajectory";
