/**
 * scripts/mutants.mjs runs each row's tests in a vitest process it may kill
 * at its timeout, and a killed run never reaches its global teardown (which
 * removes the run's TMPDIR). So each run gets a TMPDIR of its own from the
 * runner, removed when the run ends however it ended: six timed-out rows of
 * one full mutant run had left six `exactspawn-test-run-*` directories in
 * /tmp. Here a run that leaves a file in its TMPDIR (and no teardown of its
 * own) must leave nothing.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { onlySkipped, runTests } from "../../scripts/mutants.mjs";

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the mutant runner's test runs", () => {
  it("give each run its own TMPDIR and remove it when the run ends", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mutant-run-"));
    scratch.push(dir);
    writeFileSync(
      join(dir, "vitest.config.mjs"),
      'export default { test: { projects: [{ test: { name: "native", globals: true, include: ["leaves.test.mjs"] } }] } };\n',
    );
    // The test records the TMPDIR it was given and leaves a file in it.
    writeFileSync(
      join(dir, "leaves.test.mjs"),
      [
        'import { writeFileSync } from "node:fs";',
        'import { tmpdir } from "node:os";',
        'import { join } from "node:path";',
        'it("leaves a file in its TMPDIR", () => {',
        '  writeFileSync(join(import.meta.dirname, "tmpdir.txt"), tmpdir());',
        '  writeFileSync(join(tmpdir(), "left-behind"), "");',
        "});",
        "",
      ].join("\n"),
    );
    const run = await runTests(dir, ["leaves.test.mjs"], join(dir, "run.log"), 120);
    expect(run.status, run.stdout).toBe(0);
    const seen = readFileSync(join(dir, "tmpdir.txt"), "utf8");
    expect(seen).not.toBe(tmpdir());
    expect(() => readFileSync(join(seen, "left-behind"))).toThrow(/ENOENT/);
    expect(() => readFileSync(seen)).toThrow(/ENOENT/);
  });
});

describe("a run whose tests all skipped", () => {
  it("is told from one that passed (a kernel-tier row proves nothing here)", () => {
    expect(onlySkipped("\x1b[2m      Tests \x1b[22m \x1b[33m2 skipped\x1b[39m (2)\n")).toBe(true);
    expect(onlySkipped("      Tests  1 passed | 2 skipped (3)\n")).toBe(false);
    expect(onlySkipped("      Tests  3 passed (3)\n")).toBe(false);
    expect(onlySkipped("      Tests  1 failed | 1 skipped (2)\n")).toBe(false);
  });
});
