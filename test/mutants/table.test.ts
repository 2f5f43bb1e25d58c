/**
 * The mutant table (test/mutants/table.mjs, run by `npm run test:mutants`)
 * and docs/security.md's control → test table say the same thing, and the
 * table still points at code that exists:
 * - each row's search text occurs exactly once in its file (a row that no
 *   longer matches is caught here, in every `npm test`, not only when the
 *   slow mutant run happens);
 * - each row names a control of the doc's table, and the doc cites each of
 *   the row's test files for that control;
 * - each control of the doc has a mutant, or a reason in UNMUTATED.
 *
 * Seen red by renaming a control in docs/security.md, by dropping a cited
 * test file from its cell, and by a row whose search text was changed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { occurrences, tableProblems } from "../../scripts/mutants.mjs";
import { MUTANTS, UNMUTATED } from "./table.mjs";

const root = join(import.meta.dirname, "../..");

/** docs/security.md's controls table: control → its "proven by" cell. */
function documentedControls(): Map<string, string> {
  const text = readFileSync(join(root, "docs/security.md"), "utf8");
  const start = text.indexOf("## Controls, and the tests that prove them");
  expect(start).toBeGreaterThan(0);
  const section = text.slice(start).split("\n## ")[0]!;
  const rows = section
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| control |"))
    .filter((line) => !/^\|\s*-+\s*\|/.test(line));
  const controls = new Map<string, string>();
  for (const row of rows) {
    const cells = row.split(/(?<!\\)\|/).map((cell) => cell.trim());
    // "", control, what it does, proven by, ""
    expect(cells, row.slice(0, 60)).toHaveLength(5);
    controls.set(cells[1]!, cells[3]!);
  }
  return controls;
}

describe("the mutant table", () => {
  it("every search text occurs exactly once in its file, every test file exists", () => {
    expect(tableProblems(root)).toEqual([]);
  });

  it("occurrences counts every match (the rule the tool applies)", () => {
    expect(occurrences("aXbXc", "X")).toBe(2);
    expect(occurrences("aaa", "aa")).toBe(2);
    expect(occurrences("abc", "d")).toBe(0);
  });

  it("rows have unique names, and only equivalent rows are left unrun, with a reason", () => {
    const names = MUTANTS.map((row) => row.name);
    expect(new Set(names).size).toBe(names.length);
    for (const row of MUTANTS) {
      expect(row.search, row.name).not.toBe(row.replace);
      expect(row.tests.length, row.name).toBeGreaterThan(0);
      if (row.equivalent !== undefined) expect(row.equivalent.length, row.name).toBeGreaterThan(20);
      expect(row.native, row.name).toBe(row.file.startsWith("native/"));
    }
  });

  it("each row's control is in docs/security.md, which cites the row's tests for it", () => {
    const controls = documentedControls();
    for (const row of MUTANTS) {
      const cell = controls.get(row.control);
      expect(cell, `${row.name}: control "${row.control}"`).toBeDefined();
      for (const test of row.tests) {
        expect(cell, `${row.name}: docs/security.md cites ${test}`).toContain(`\`${test}\``);
      }
    }
  });

  it("each control of docs/security.md has a mutant, or a reason why not", () => {
    const controls = [...documentedControls().keys()];
    const covered = new Set(MUTANTS.map((row) => row.control));
    const missing = controls.filter((control) => !covered.has(control) && !(control in UNMUTATED));
    expect(missing).toEqual([]);
    // A reason for a control that now has a mutant, or that the doc dropped, is stale.
    const stale = Object.keys(UNMUTATED).filter(
      (control) => covered.has(control) || !controls.includes(control),
    );
    expect(stale).toEqual([]);
  });
});
