import { stem } from "./search-tokens";

/**
 * The Snowball English stop-word list (snowballstem.org/algorithms/english/stop.txt, the list
 * published with the Porter2 stemmer; its contractions are left out because the tokenizer splits
 * them at the apostrophe), as Porter2 stems. Query words in it count at half weight rather
 * than being dropped: in a catalog of a few tools "an" or "on" are as rare as "issue", so IDF
 * alone cannot tell them apart, yet "turn on" or "what's in this bucket" still carry meaning.
 * Stemmed on the first search, not at startup (stemming the list costs milliseconds).
 */
const STOP_WORDS =
  "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself " +
  "it its itself they them their theirs themselves what which who whom this that these those am is are was were be " +
  "been being have has had having do does did doing would should could ought a an the and but if or because as until " +
  "while of at by for with about against between into through during before after above below to from up down in out " +
  "on off over under again further then once here there when where why how all any both each few more most other some " +
  "such no nor not only own same so than too very";

let stopStems: ReadonlySet<string> | undefined;

export function isStopStem(term: string): boolean {
  stopStems ??= new Set(STOP_WORDS.split(" ").map(stem));
  return stopStems.has(term);
}
