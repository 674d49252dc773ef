/** Types for the untyped CommonJS package (src/wink-porter2-stemmer.js: `module.exports = stem`). */
declare module "wink-porter2-stemmer" {
  /** Porter2 (Snowball English) stem of a lowercase word. */
  const stem: (word: string) => string;
  export default stem;
}
