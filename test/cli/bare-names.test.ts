/**
 * `--bare-name` and `--preset` on the command line: by default untrusted
 * input gets only namespaced names; a declared bare name (and only it)
 * reaches the step bare; reserved names cannot be declared; the recipe-runner
 * preset gives every key its bare name. The oracle is the step's own
 * environment as the kernel delivered it (the step's /proc/$$/environ), not
 * the planner.
 *
 * Control check (done once, by hand): with the `bareNames` line removed from
 * stepRequest, the declared-name case printed no TASK_DESCRIPTION and went red.
 */
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/run-cli.js";

const MARKER = "sentinel-bare-5e";

/** The names in the step's environment that start with one of `prefixes`, sorted. */
function namesIn(args: string[], prefixes: string[]): string[] {
  const run = cli(["run", ...args, "--", "tr '\\0' '\\n' </proc/$$/environ | cut -d= -f1"]);
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return run.stdout
    .split("\n")
    .filter((name) => prefixes.some((prefix) => name.startsWith(prefix)))
    .sort();
}

const INPUT = [
  "--context",
  `task_description=${MARKER}`,
  "--context",
  `repo_path=${MARKER}`,
  "--var",
  `report=${MARKER}`,
];
const WATCHED = ["TASK_", "REPO_", "REPORT", "CTX_", "RECIPE_VAR_"];

describe("bare names on the command line", () => {
  it("by default: context as CTX_*, step values as RECIPE_VAR_* only", () => {
    expect(namesIn(INPUT, WATCHED)).toEqual([
      "CTX_REPO_PATH",
      "CTX_TASK_DESCRIPTION",
      "RECIPE_VAR_report",
    ]);
  });

  it("--bare-name sets exactly the declared names bare", () => {
    expect(
      namesIn([...INPUT, "--bare-name", "task_description", "--bare-name", "REPORT"], WATCHED),
    ).toEqual(["CTX_REPO_PATH", "RECIPE_VAR_report", "REPORT", "TASK_DESCRIPTION"]);
  });

  it("--preset recipe-runner-compat gives every key its bare name", () => {
    expect(namesIn([...INPUT, "--preset", "recipe-runner-compat"], WATCHED)).toEqual([
      "RECIPE_VAR_report",
      "REPORT",
      "REPO_PATH",
      "TASK_DESCRIPTION",
    ]);
  });

  it("a reserved or malformed bare name, or an unknown preset, is a usage error naming it", () => {
    for (const [args, line] of [
      [["--bare-name", "ld_preload"], "--bare-name #1 names a reserved variable: LD_PRELOAD"],
      [["--bare-name", "ok", "--bare-name", "1x"], "--bare-name #2 is not a shell identifier"],
      [["--preset", MARKER], '--preset must be "recipe-runner-compat"'],
    ] as const) {
      const run = cli(["run", ...args, "--", "true"]);
      expect(run.status).toBe(2);
      expect(run.stderr).toBe(`exactspawn run: ${line}\n`);
    }
    // Even under the preset a reserved key never reaches the step bare.
    expect(
      namesIn(
        ["--preset", "recipe-runner-compat", "--context", `ld_preload=${MARKER}`, "--allow-skips"],
        ["LD_", "CTX_"],
      ),
    ).toEqual([]);
  });
});
