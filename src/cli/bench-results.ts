/**
 * Reads the measurements out of the benchmarks' printed output, for the
 * combined table `exactspawn bench` ends with. The benchmarks print for
 * people; this recognises their three shapes and ignores everything else:
 *
 *   "  ours/c 0.92x (goal >= 0.85x met)"         ratios against an anchor
 *   "ratio: 1.23% of one spawn (goal ≤ 5%) OK"   a ratio line
 *   "planSpill, 1000 vars   median 0.178 ms …"   a median
 */
export interface BenchRow {
  readonly bench: string;
  readonly measure: string;
  readonly value: string;
  readonly goal: string;
  readonly verdict: string;
}

const ANCHOR_RATIO = /(\w+)\/(\w+) ([\d.]+)x(?: \(goal >= ([\d.]+)x (\w+)\))?/g;
const RATIO_LINE = /^ratio:\s*([\d.]+%?)(.*?)(?:\(goal ([^)]*)\))?\s*(\w+)?\s*$/i;
const MEDIAN = /^(\S.*?)\s+median\s+([\d.]+\s*\S+)/;

/** The rows found in one benchmark's output. Pure and total. */
export function benchRows(bench: string, output: string): BenchRow[] {
  const rows: BenchRow[] = [];
  let section = "";
  for (const rawLine of output.split("\n")) {
    const line = rawLine.trimEnd();
    if (/^\(\d+\)/.test(line)) section = line.replace(/^\(\d+\)\s*/, "");
    let found = false;
    for (const match of line.matchAll(ANCHOR_RATIO)) {
      found = true;
      const [, ours, anchor, ratio, goal, verdict] = match;
      rows.push({
        bench,
        measure: `${section === "" ? "" : `${section}: `}${ours}/${anchor}`,
        value: `${ratio}x`,
        goal: goal === undefined ? "" : `>= ${goal}x`,
        verdict: verdict ?? "",
      });
    }
    if (found) continue;
    const ratio = RATIO_LINE.exec(line.trim());
    if (ratio !== null) {
      const [, value, what, goal, verdict] = ratio;
      rows.push({
        bench,
        measure: `ratio${what?.trim() ? `: ${what.trim()}` : ""}`,
        value: value ?? "",
        goal: goal ?? "",
        verdict: verdict ?? "",
      });
      continue;
    }
    const median = MEDIAN.exec(line);
    if (median !== null) {
      rows.push({ bench, measure: median[1]!, value: median[2]!, goal: "", verdict: "" });
    }
  }
  return rows;
}

/** Aligned columns with a header. */
export function benchTable(rows: readonly BenchRow[]): string {
  const header: BenchRow = {
    bench: "BENCHMARK",
    measure: "MEASURE",
    value: "VALUE",
    goal: "GOAL",
    verdict: "VERDICT",
  };
  const keys = ["bench", "measure", "value", "goal", "verdict"] as const;
  const all = [header, ...rows];
  const widths = keys.map((key) => Math.max(...all.map((row) => row[key].length)));
  return all
    .map((row) =>
      keys
        .map((key, i) => row[key].padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
