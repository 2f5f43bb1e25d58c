/**
 * The closing line of `node scripts/matrix.mjs --suite <major>`, from a
 * made-up vitest JSON report: test and file counts as vitest's own summary
 * gives them, every failed test named, and an exit status that no failed
 * test explains (the TMPDIR leak check fails the run at teardown) said so.
 */
import { describe, expect, it } from "vitest";
import { suiteCounts, suiteLine } from "../scripts/matrix-suite.mjs";

const root = "/repo";

function file(name: string, statuses: string[], fileStatus = "passed", message = "") {
  return {
    name: `${root}/${name}`,
    status: fileStatus,
    message,
    assertionResults: statuses.map((status, i) => ({ status, fullName: `${name} case ${i}` })),
  };
}

const report = {
  numTotalTests: 7,
  numPassedTests: 3,
  numFailedTests: 1,
  numPendingTests: 2,
  numTodoTests: 1,
  testResults: [
    file("test/a.test.ts", ["passed", "pending"]),
    file("test/b.test.ts", ["passed", "failed"], "failed"),
    file("test/c.test.ts", ["skipped", "todo"]),
    file("test/d.test.ts", ["passed"]),
    file("test/e.test.ts", [], "failed", "Cannot find module"),
  ],
};

describe("the --suite summary", () => {
  it("counts tests and files as vitest does and names each failure", () => {
    const counts = suiteCounts(report, root);
    expect(counts.tests).toEqual({ passed: 3, failed: 1, skipped: 3, total: 7 });
    expect(counts.files).toEqual({ passed: 2, failed: 2, skipped: 1 });
    expect(counts.failures).toEqual([
      "test/b.test.ts > test/b.test.ts case 1",
      "test/e.test.ts: Cannot find module",
    ]);
  });

  it("puts version, addon, counts, exit and time on one line", () => {
    const counts = suiteCounts(report, root);
    const line = suiteLine({
      version: "24.22.3",
      addon: "prebuilds/linux-x64/exactspawn.glibc.node",
      counts,
      exit: 1,
      seconds: 400,
      only: [],
    });
    expect(line).toBe(
      "suite under Node 24.22.3, addon prebuilds/linux-x64/exactspawn.glibc.node: " +
        "tests 3 passed, 1 failed, 3 skipped (7); files 2 passed, 2 failed, 1 skipped; exit 1 in 400 s",
    );
  });

  it("says when the exit status comes from outside the tests", () => {
    const passing = {
      ...report,
      numFailedTests: 0,
      testResults: [file("test/d.test.ts", ["passed"])],
    };
    const line = suiteLine({
      version: "22.23.0",
      addon: "x",
      counts: suiteCounts(passing, root),
      exit: 1,
      seconds: 1,
      only: ["test/d.test.ts"],
    });
    expect(line).toMatch(/^test\/d\.test\.ts under Node 22\.23\.0, addon x: /);
    expect(line).toContain("exit 1 (an error outside the tests: see vitest's output above)");
  });

  it("says when vitest wrote no report", () => {
    const line = suiteLine({
      version: "26.12.1",
      addon: "x",
      counts: undefined,
      exit: "SIGKILL",
      seconds: 3,
      only: [],
    });
    expect(line).toBe(
      "suite under Node 26.12.1, addon x: no report (vitest did not finish); exit SIGKILL in 3 s",
    );
  });
});
