import porter2 from "wink-porter2-stemmer";

/**
 * Tokens for catalog search, the same for tool text and queries. Words are runs of Unicode
 * letters, digits and combining marks in any script (NFKC, Unicode lowercasing); diacritics
 * of the generic combining block are folded ("relatório" = "relatorio", "ё" = "е"); camelCase
 * words also yield their parts ("GitHub" → github, git, hub); words of ASCII letters go through the
 * Porter2 (Snowball English) stemmer; scripts written without spaces (Han, kana, Hangul)
 * become overlapping character bigrams, as in Lucene's CJK analyzer. No word lists.
 */

/** The same for ASCII text (most tool text), without the cost of Unicode property matching. */
const ASCII_WORD = /[A-Za-z0-9]+/g;
/** U+0300–U+036F only: Latin/Greek/Cyrillic accents; marks that make letters elsewhere stay. */
const DIACRITICS = /[\u0300-\u036f]+/g;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The Unicode property classes, built on first use: V8 builds a class's character set from ICU
 * when the literal is evaluated (~1.6 ms for these), a cost an isolate that never searches should
 * not pay at startup.
 */
let unicodeClasses: { word: RegExp; unspaced: RegExp; unspacedRuns: RegExp; camel: RegExp } | undefined;
const unicode = () =>
  (unicodeClasses ??= {
    /** Runs of letters, digits and marks: `_`, `-`, `.`, `/`, spaces and punctuation split words. */
    word: /[\p{L}\p{N}\p{M}]+/gu,
    /** Scripts written without spaces between words. `scx` so the prolonged sound mark ー counts. */
    unspaced: /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u,
    unspacedRuns:
      /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{M}]+|[^\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{M}]+/gu,
    camel: /(\p{Ll}|\p{N})(\p{Lu})|(\p{Lu})(\p{Lu}\p{Ll})/gu,
  });
/** Only words of ASCII letters are stemmed (the stemmer also rewrites a "3" inside a word to "y"). */
const ENGLISH_WORD = /^[a-z]+$/;

/** Porter2 stem of a lowercase word of ASCII letters; other words are returned unchanged. */
export function stem(word: string): string {
  if (!ENGLISH_WORD.test(word)) return word;
  const out: unknown = porter2(word);
  // The stemmer keys its exception table by the word; guard its result all the same.
  return typeof out === "string" && out.length > 0 ? out : word;
}

function fold(word: string): string {
  const lower = word.toLowerCase();
  return ASCII.test(lower) ? lower : lower.normalize("NFD").replace(DIACRITICS, "").normalize("NFC");
}

function wordTerms(raw: string): readonly string[] {
  const terms = [stem(fold(raw))];
  const split = raw.replace(unicode().camel, (_m, a, b, c, d) => (a !== undefined ? `${a} ${b}` : `${c} ${d}`));
  if (split !== raw) for (const part of split.split(" ")) terms.push(stem(fold(part)));
  return terms;
}

/**
 * Terms of each word seen, memoised: tool text repeats its words, and stemming dominates the
 * cost of building an index. A Map (keys are tool and query text); bounded, cleared when full.
 */
const WORD_CACHE = new Map<string, readonly string[]>();
const WORD_CACHE_MAX = 50_000;

function pushWord(raw: string, out: string[]): void {
  let terms = WORD_CACHE.get(raw);
  if (!terms) {
    terms = wordTerms(raw);
    if (WORD_CACHE.size >= WORD_CACHE_MAX) WORD_CACHE.clear();
    WORD_CACHE.set(raw, terms);
  }
  for (const t of terms) out.push(t);
}

function pushBigrams(run: string, out: string[]): void {
  const chars = Array.from(run);
  if (chars.length === 1) out.push(run);
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
}

/** Index/query terms of `text`, in order (repeats kept: they are term frequencies). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  if (ASCII.test(text)) {
    for (const [raw] of text.matchAll(ASCII_WORD)) pushWord(raw, out);
    return out;
  }
  const { word, unspaced, unspacedRuns } = unicode();
  for (const [raw] of text.normalize("NFKC").matchAll(word)) {
    if (!unspaced.test(raw)) {
      pushWord(raw, out);
      continue;
    }
    for (const [run] of raw.matchAll(unspacedRuns)) {
      if (unspaced.test(run)) pushBigrams(run.toLowerCase(), out);
      else pushWord(run, out);
    }
  }
  return out;
}
