// Shared by the benchmarks: the median of a list of samples.
export function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * The median over rounds of ours / theirs, each round's pair measured back
 * to back: drift between rounds cancels, which a ratio of medians keeps.
 */
export function pairedRatio(ours, theirs) {
  return median(ours.map((value, round) => value / theirs[round]));
}
