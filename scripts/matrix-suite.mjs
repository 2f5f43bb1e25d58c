// The whole vitest suite under another Node (scripts/matrix.mjs --suite <major>).
// Vitest runs under that Node (its workers are forks of it) with its bin
// directory first on PATH, so the tests' own `node` children are that Node
// too; the default reporter prints as usual, a JSON report gives the counts.
// The run ends with one line for a closing note: Node version, the addon
// file the library loads under it (or the fallback and why), tests passed,
// failed and skipped, test files likewise, vitest's exit status, seconds.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";

/**
 * What vitest's JSON report says: counts of tests and of test files (a file
 * whose tests were all skipped counts as skipped, as vitest's own summary
 * does), and the full names of the failed tests with their files.
 */
export function suiteCounts(report, root) {
  const files = { passed: 0, failed: 0, skipped: 0 };
  const failures = [];
  for (const file of report.testResults) {
    const tests = file.assertionResults;
    const failed = tests.filter((t) => t.status === "failed");
    for (const t of failed) failures.push(`${relative(root, file.name)} > ${t.fullName}`);
    if (file.status === "failed") {
      files.failed += 1;
      if (failed.length === 0) {
        failures.push(`${relative(root, file.name)}: ${file.message || "failed"}`);
      }
    } else if (tests.length > 0 && tests.every((t) => t.status !== "passed")) files.skipped += 1;
    else files.passed += 1;
  }
  return {
    tests: {
      passed: report.numPassedTests,
      failed: report.numFailedTests,
      skipped: report.numPendingTests + report.numTodoTests,
      total: report.numTotalTests,
    },
    files,
    failures,
  };
}

/** The closing line; `counts` is undefined when vitest wrote no report (it did not finish). */
export function suiteLine({ version, addon, counts, exit, seconds, only }) {
  const what =
    only.length > 0 ? `${only.join(" ")} under Node ${version}` : `suite under Node ${version}`;
  const tally = (c) => `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
  const result =
    counts === undefined
      ? "no report (vitest did not finish)"
      : `tests ${tally(counts.tests)} (${counts.tests.total}); files ${tally(counts.files)}`;
  const outside =
    counts !== undefined && counts.tests.failed === 0 && exit !== 0
      ? " (an error outside the tests: see vitest's output above)"
      : "";
  return `${what}, addon ${addon}: ${result}; exit ${exit}${outside} in ${seconds} s`;
}

/** The addon file the library loaded under `node` (the one its dynamic loader mapped), or the fallback and why. */
function addonInUse(node, root, env) {
  const probe = `const { nativeStatus } = await import(${JSON.stringify(join(root, "dist/index.js"))});
const s = nativeStatus();
console.log(JSON.stringify({ loaded: s.loaded, reason: s.reason ?? null, file: s.file ?? null }));`;
  const run = spawnSync(node, ["--input-type=module", "-e", probe], {
    cwd: root,
    encoding: "utf8",
    env: { ...env, EXACTSPAWN_NATIVE: "", EXACTSPAWN_LOG_LEVEL: "silent" },
  });
  try {
    const status = JSON.parse(run.stdout.trim().split("\n").pop());
    if (status.loaded) return status.file === null ? "loaded" : relative(root, status.file);
    return `none (fallback: ${status.reason})`;
  } catch {
    return `unknown (the probe exited ${run.status ?? run.signal}: ${run.stderr.trim().split("\n").pop() ?? ""})`;
  }
}

/** Runs vitest (all files, or `only`) under `node`; prints the closing line; returns vitest's exit status. */
export function runSuite({ node, version, root, only }) {
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}` };
  const addon = addonInUse(node, root, env);
  const scratch = mkdtempSync(join(tmpdir(), "exactspawn-matrix-suite-"));
  const json = join(scratch, "report.json");
  const started = Date.now();
  const run = spawnSync(
    node,
    [
      join(root, "node_modules/vitest/vitest.mjs"),
      "run",
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${json}`,
      ...only,
    ],
    { cwd: root, stdio: "inherit", env },
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  let counts;
  try {
    counts = suiteCounts(JSON.parse(readFileSync(json, "utf8")), root);
  } catch {}
  rmSync(scratch, { recursive: true, force: true });
  const exit = run.status ?? run.signal;
  for (const failure of counts?.failures ?? []) console.log(`failed: ${failure}`);
  console.log(suiteLine({ version, addon, counts, exit, seconds, only }));
  return run.status ?? 1;
}
