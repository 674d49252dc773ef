/**
 * A JavaScript/TypeScript tokenizer (comments, strings, templates, regex literals): what the
 * cell-source checks and the source redaction both read code with. It imports nothing.
 */
export { tokenize } from "./js-scanner";
export { Tok, TokenList } from "./token-list";
