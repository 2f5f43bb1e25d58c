export interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}
export interface SuiteCounts {
  tests: Tally & { total: number };
  files: Tally;
  failures: string[];
}
/** Counts and failures from vitest's JSON report (`--reporter=json`). */
export function suiteCounts(report: unknown, root: string): SuiteCounts;
/** The closing line of `scripts/matrix.mjs --suite`. */
export function suiteLine(run: {
  version: string;
  addon: string;
  counts: SuiteCounts | undefined;
  exit: number | string | null;
  seconds: number;
  only: string[];
}): string;
/** Runs vitest under `node`, prints the closing line, returns vitest's exit status. */
export function runSuite(run: {
  node: string;
  version: string;
  root: string;
  only: string[];
}): number;
