/** Tool Search (seed 004): the compact catalog surface for runs without code mode. */
export * from "./tool-search-catalog";
export * from "./tool-search-input";
export * from "./tool-search-surface";
