/**
 * `exactspawn bench`: discovery (*.bench.mjs, then run.mjs), a progress line
 * per benchmark, each one's output, the combined table, and the exit status.
 * Stand-in benchmarks keep this fast; the real ones are only listed.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { benchRows } from "../../src/cli/bench-results.js";
import { PACKAGE_ROOT } from "../../src/native.js";
import { cli } from "../helpers/run-cli.js";

const FIXTURES = join(PACKAGE_ROOT, "test/fixtures/cli/bench");

describe("exactspawn bench", () => {
  it("lists the package's benchmarks", () => {
    const run = cli(["bench", "--list"]);
    expect(run.status).toBe(0);
    const files = run.stdout.trim().split("\n");
    expect(files).toContain("bench/env-build.bench.mjs");
    expect(files).toContain("bench/spill-plan.bench.mjs");
  });

  it("runs each benchmark with progress and ends with the combined table", () => {
    const run = cli(["bench", "--dir", FIXTURES, "--quick"]);
    expect(run.status).toBe(1); // the stand-in run.mjs exits 3
    expect(run.stderr).toMatch(/\[1\/3\] .*anchor\.bench\.mjs done/);
    expect(run.stderr).toMatch(/\[2\/3\] .*median\.bench\.mjs done/);
    expect(run.stderr).toMatch(/\[3\/3\] .*run\.mjs FAILED \(exit 3\)/);
    expect(run.stdout).toContain("args=--quick");
    const combined = run.stdout.slice(run.stdout.indexOf("== combined"));
    expect(combined).toMatch(
      /sequential \/bin\/true, stdio ignored: ours\/c\s+0\.95x\s+>= 0\.85x\s+met/,
    );
    expect(combined).toMatch(/ours\/child_process\s+3\.33x/);
    expect(combined).toMatch(/ratio: of one spawn\s+1\.50%\s+≤ 5%\s+OK/);
    expect(combined).toMatch(/planSpill, 1000 vars\s+0\.178 ms/);
    expect(combined).toMatch(/run\.mjs\s+ours\/execa\s+2\.60x\s+>= 2\.5x\s+met/);
  });

  it("fails with one line when there is nothing to run, and answers --help", () => {
    const none = cli(["bench", "--dir", join(FIXTURES, "missing")]);
    expect(none.status).toBe(1);
    // The whole stderr in the message: test:long on a loaded machine once saw ten lines here
    // (stop 41), and the assertion alone did not say what they were.
    expect(none.stderr.trim().split("\n"), none.stderr).toHaveLength(1);
    expect(cli(["bench", "--help"]).stdout).toMatch(/^Usage: exactspawn bench/);
    expect(cli(["bench", "--bogus"]).status).toBe(2);
    expect(cli(["bench", "extra"]).status).toBe(2);
  });

  it("exits 3 with one line naming the missed goals when every benchmark ran", () => {
    const run = cli(["bench", "--dir", join(PACKAGE_ROOT, "test/fixtures/cli/bench-missed")]);
    expect(run.status).toBe(3);
    expect(run.stderr.trim().split("\n").at(-1)).toBe(
      "exactspawn bench: 1 goal(s) missed: " +
        "test/fixtures/cli/bench-missed/missed.bench.mjs: sequential /bin/true, stdio ignored: ours/c",
    );
  });

  it("is not advertised, and says why, in an installed package (no bench/ shipped)", () => {
    // The installed package's layout: package.json, dist/ and its dependencies, no bench/.
    const root = mkdtempSync(join(tmpdir(), "exactspawn-installed-test-"));
    try {
      cpSync(join(PACKAGE_ROOT, "package.json"), join(root, "package.json"));
      cpSync(join(PACKAGE_ROOT, "dist"), join(root, "dist"), { recursive: true });
      symlinkSync(join(PACKAGE_ROOT, "node_modules"), join(root, "node_modules"));
      const installed = (args: string[]) =>
        spawnSync(process.execPath, [join(root, "dist/cli.js"), ...args], { encoding: "utf8" });
      const help = installed(["--help"]);
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(/\n {2}run {8}/);
      expect(help.stdout).not.toMatch(/bench/);
      const bench = installed(["bench"]);
      expect(bench.status).toBe(1);
      expect(bench.stderr).toBe(
        "exactspawn bench: the benchmarks are not part of the installed package; " +
          "run them from a source checkout (npm run bench)\n",
      );
      // The checkout does advertise it.
      expect(cli(["--help"]).stdout).toMatch(/\n {2}bench {6}run the side-by-side benchmarks/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("recognises the three output shapes and ignores the rest", () => {
    expect(benchRows("b", "node v20\n  ours 1/s\nnothing here\n")).toEqual([]);
    expect(benchRows("b", "ratio: 2.00% of one spawn (goal ≤ 5%) OK")).toEqual([
      { bench: "b", measure: "ratio: of one spawn", value: "2.00%", goal: "≤ 5%", verdict: "OK" },
    ]);
  });
});
