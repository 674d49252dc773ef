/**
 * How an A/B across builds reads: per root the median and IQR of its per-round figures, and
 * for every root after the first, the median and IQR of its per-round difference from the first
 * (the rounds are interleaved, so a paired difference cancels what the machine did that round).
 */
const quartiles = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[s.length >> 1]!, q1: s[Math.floor(s.length / 4)]!, q3: s[Math.floor((3 * s.length) / 4)]! };
};

export function abReport(what: string, roots: readonly string[], perRound: readonly (readonly number[])[]): string[] {
  const f = (x: number) => x.toFixed(2);
  return roots.map((root, i) => {
    const q = quartiles(perRound[i]!);
    const line = `${root}: ${what} ${f(q.median)} ms (IQR ${f(q.q1)}–${f(q.q3)}; rounds ${perRound[i]!.map(f).join(" ")})`;
    if (i === 0) return line;
    const d = quartiles(perRound[i]!.map((x, r) => x - perRound[0]![r]!));
    return `${line}\n  vs ${roots[0]}: ${d.median >= 0 ? "+" : ""}${f(d.median)} ms per round (IQR ${f(d.q1)}–${f(d.q3)})`;
  });
}
