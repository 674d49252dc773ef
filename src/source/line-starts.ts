/**
 * Line numbers as an editor shows them. Only `\n`, `\r\n` and `\r` end a line: ECMAScript also
 * treats U+2028/U+2029 as line terminators (and the TypeScript compiler numbers lines that way),
 * but editors display them inside a line, so a message saying "line 7" must not count them.
 */

/** Offsets at which each line of `text` starts (the first is always 0). One linear pass. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) starts.push(i + 1);
    else if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    }
  }
  return starts;
}

/** 1-based line and column (UTF-16 units) of `offset`, clamped to the text; O(log lines). */
export function lineAndColumn(starts: readonly number[], textLength: number, offset: number): { line: number; column: number } {
  const at = Math.max(0, Math.min(offset, textLength));
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: at - starts[lo]! + 1 };
}
