/** How often `search` occurs in `text`. */
export function occurrences(text: string, search: string): number;
/** Each row's search text and tests checked against the sources under `dir`: the problems found. */
export function tableProblems(dir: string): string[];
