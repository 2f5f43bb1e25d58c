/**
 * "Did you mean" for the command line and for option objects: the known word closest to what was
 * typed, when it is close enough to be a typo (Damerau–Levenshtein distance
 * with adjacent transpositions, at most 2, and less than half the word).
 */

/** The edit distance between `a` and `b`, counting a swap of neighbours as one edit. */
function distance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest of `known` to `typed`, or undefined when none is a likely typo. Pure. */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const word of known) {
    const d = distance(typed, word);
    if (d < bestDistance) {
      best = word;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= 2 && bestDistance * 2 < best.length
    ? best
    : undefined;
}

/** `; did you mean "x"?` for a likely typo, else "". */
export function didYouMean(typed: string, known: Iterable<string>): string {
  const match = closest(typed, known);
  return match === undefined ? "" : `; did you mean "${match}"?`;
}
