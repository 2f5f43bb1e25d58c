/** How often `search` occurs in `text`. */
export function occurrences(text: string, search: string): number;
/** Each row's search text and tests checked against the sources under `dir`: the problems found. */
export function tableProblems(dir: string): string[];
/** Runs test files (vitest, native project) in `dir`, killed past `seconds`, with a TMPDIR of their own removed afterwards. */
export function runTests(
  dir: string,
  tests: readonly string[],
  log: string,
  seconds: number,
): Promise<{ status: number | null; stdout: string; timedOut: boolean; left: string[] }>;
/** Whether vitest's output counts skipped tests and no passed or failed one. */
export function onlySkipped(output: string): boolean;
