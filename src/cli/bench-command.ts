/**
 * `exactspawn bench`: runs the side-by-side benchmarks found in the
 * package's bench/ directory (every *.bench.mjs, then run.mjs), one Node
 * process each, with a progress line; prints each one's output and ends with
 * one combined table of their ratios and medians.
 */
import { existsSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { PACKAGE_ROOT } from "../native.js";
import { spawn } from "../spawn/spawn.js";
import { type BenchRow, benchRows, benchTable } from "./bench-results.js";
import { parseCommandLine } from "./command-line.js";
import { applyLogLevel } from "./log-level.js";
import { UsageError } from "./usage-error.js";

export const BENCH_HELP = `Usage: exactspawn bench [--quick] [--list] [--dir DIR]

Runs the side-by-side benchmarks (bench/*.bench.mjs, then bench/run.mjs when present), each in
its own Node process, showing progress on stderr and each benchmark's output on stdout, then
one combined table of ratios and medians. Needs the compiled package (npm run compile). The
benchmarks ship with the source checkout, not with the npm package.

Options:
  --quick              pass --quick to each benchmark (fewer rounds where supported)
  --list               only list the benchmarks that would run
  --dir DIR            where to look (default: the package's bench/ directory)
  --log-level LEVEL    pino level for notices on stderr
  -h, --help

Exit status: 0 every benchmark exited 0 and met its goals; 1 one failed or none was found;
2 usage error; 3 every benchmark ran but a goal was missed.`;

/** Exit status when every benchmark ran but one of them missed a goal. */
export const EXIT_GOAL_MISSED = 3;

/** Whether the benchmarks are here: a source checkout has bench/; the installed package does not. */
export function benchmarksShipped(root = PACKAGE_ROOT): boolean {
  return existsSync(join(root, "bench", "run.mjs"));
}

/** Whether a row's verdict says its goal was missed ("MISSED", "OVER", …). */
export function goalMissed(row: BenchRow): boolean {
  return /^(missed|over|fail)/i.test(row.verdict);
}

/** The benchmark scripts in `dir`, in run order. */
export function discoverBenchmarks(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const benches = names.filter((name) => name.endsWith(".bench.mjs")).sort();
  if (names.includes("run.mjs")) benches.push("run.mjs");
  return benches.map((name) => join(dir, name));
}

export async function runBench(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine("bench", argv, {
    quick: { type: "boolean" },
    list: { type: "boolean" },
    dir: { type: "string" },
    "log-level": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    process.stdout.write(`${BENCH_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError("bench takes no arguments");
  const log = applyLogLevel(values["log-level"]);
  const dir = resolve(values.dir ?? join(PACKAGE_ROOT, "bench"));
  const files = discoverBenchmarks(dir);
  if (files.length === 0) {
    const why =
      values.dir === undefined
        ? "the benchmarks are not part of the installed package; run them from a source " +
          "checkout (npm run bench)"
        : `no benchmarks in ${dir}`;
    process.stderr.write(`exactspawn bench: ${why}\n`);
    return 1;
  }
  const label = (file: string): string => relative(process.cwd(), file) || file;
  if (values.list) {
    process.stdout.write(`${files.map(label).join("\n")}\n`);
    return 0;
  }
  const progress = (text: string, done: boolean): void => {
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${text}${done ? "\n" : ""}`);
    else process.stderr.write(`${text}\n`);
  };
  const rows: BenchRow[] = [];
  let failed = 0;
  for (const [index, file] of files.entries()) {
    const step = `[${index + 1}/${files.length}] ${label(file)}`;
    progress(`${step} running…`, false);
    const result = await spawn(process.execPath, [file, ...(values.quick ? ["--quick"] : [])], {
      env: process.env,
      cwd: PACKAGE_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
      reject: false,
    });
    const output = typeof result.stdout === "string" ? result.stdout : "";
    const ok = result.exitCode === 0;
    if (!ok) failed++;
    const seconds = (result.durationMs / 1000).toFixed(1);
    progress(
      `${step} ${ok ? "done" : `FAILED (${result.signal ?? `exit ${result.exitCode}`})`} in ${seconds} s`,
      true,
    );
    log.info(
      { bench: label(file), exitCode: result.exitCode, durationMs: Math.round(result.durationMs) },
      "exactspawn: benchmark finished",
    );
    process.stdout.write(`\n== ${label(file)}\n${output.trimEnd()}\n`);
    rows.push(...benchRows(label(file), output));
  }
  process.stdout.write(
    `\n== combined\n${rows.length > 0 ? benchTable(rows) : "(no ratios or medians recognised)"}\n`,
  );
  if (failed > 0) return 1;
  const missed = rows.filter(goalMissed);
  if (missed.length > 0) {
    const names = missed.map((row) => `${row.bench}: ${row.measure}`).join(", ");
    process.stderr.write(`exactspawn bench: ${missed.length} goal(s) missed: ${names}\n`);
    return EXIT_GOAL_MISSED;
  }
  return 0;
}
