/**
 * The command's manners, run as a user would: --version, a named value that
 * cannot reach the step is an error (exit 2, one line naming it, never its
 * value) unless --allow-skips, our own message for every bad flag, and
 * explain naming the limit a variable hit and hinting when npm's variables
 * make up most of the environment. Each case asserts the exit status and the
 * exact line.
 *
 * Control check (done once, by hand): with the unreached check removed from
 * run-command.ts, the "--var my-var" case ran the step and exited 0; with
 * parseCommandLine replaced by strict parseArgs, "--exec-limit -5" printed
 * Node's "argument is ambiguous" again.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/native.js";
import { cli, scratch } from "../helpers/run-cli.js";

const MARKER = "sentinel-77aa";
const tmp = scratch();
afterAll(() => tmp.remove());

/** Exit status 2, exactly one line `line` on stderr, nothing on stdout, no marker. */
function expectUsage(args: string[], line: string): void {
  const run = cli(args);
  expect(run.status, args.join(" ")).toBe(2);
  expect(run.stderr).toBe(`${line}\n`);
  expect(run.stdout).toBe("");
  expect(run.stderr).not.toContain(MARKER);
}

describe("manners (issue 20, item 10)", () => {
  it("did you mean: a mistyped command", () => {
    expectUsage(
      ["lmits"],
      'exactspawn: unknown command "lmits"; did you mean "limits"? (try --help)',
    );
  });

  it("did you mean: a mistyped flag", () => {
    expectUsage(
      ["run", "--tiemout", "5", "--", "true"],
      'exactspawn run: unknown option --tiemout; did you mean "--timeout"? (see "exactspawn run --help")',
    );
  });

  it("no close match: no guess", () => {
    expectUsage(["frobnicate"], 'exactspawn: unknown command "frobnicate" (try --help)');
  });

  it("no arguments: the usage on stderr, exit 2; --help: on stdout, exit 0", () => {
    const bare = cli([]);
    expect(bare.status).toBe(2);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toMatch(/^Usage: exactspawn <command>/);
    const asked = cli(["--help"]);
    expect(asked.status).toBe(0);
    expect(asked.stderr).toBe("");
    expect(asked.stdout).toBe(bare.stderr);
  });

  it("the Docs: line names the installed page, which exists", () => {
    const docs = /Docs: (\S+)$/m.exec(cli(["--help"]).stdout)?.[1];
    expect(docs).toBe(join(PACKAGE_ROOT, "docs", "cli.md"));
    expect(readFileSync(docs!, "utf8")).toMatch(/^# The `exactspawn` command/);
  });

  it.each(["limits", "sandbox", "explain"])(
    "%s --help names the schema id its --json output uses",
    (command) => {
      const help = cli([command, "--help"]).stdout;
      const named = /schema: (\S+?)\)/.exec(help)?.[1];
      const output = JSON.parse(
        cli([command, "--json", ...(command === "explain" ? ["--", "true"] : [])]).stdout,
      ) as {
        schema: string;
      };
      expect(named).toBe(output.schema);
    },
  );
});

describe("NO_COLOR (no-color.org: only a non-empty value disables colour)", () => {
  it.each([
    [undefined, true],
    ["", true],
    ["1", false],
    ["0", false],
  ])("NO_COLOR=%j on a terminal: colour %s", async (value, enabled) => {
    const { colorEnabled } = await import("../../src/cli/format.js");
    const saved = process.env["NO_COLOR"];
    if (value === undefined) delete process.env["NO_COLOR"];
    else process.env["NO_COLOR"] = value;
    try {
      expect(colorEnabled({ isTTY: true } as NodeJS.WriteStream)).toBe(enabled);
      expect(colorEnabled({ isTTY: false } as NodeJS.WriteStream)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env["NO_COLOR"];
      else process.env["NO_COLOR"] = saved;
    }
  });
});

describe("exactspawn --version", () => {
  it("prints package.json's version", () => {
    const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const run = cli([flag]);
      expect(run.status).toBe(0);
      expect(run.stdout).toBe(`${version}\n`);
    }
  });
});

describe("a value the user named must reach the step", () => {
  it("--var with an invalid name: exit 2, one line, the step does not run", () => {
    const marker = tmp.write("ran", "");
    const run = cli(["run", "--var", `my-var=${MARKER}`, "--", `echo ran > ${marker}`]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      "exactspawn run: --var my-var (invalid_identifier) does not reach the step " +
        "(see exactspawn explain); fix it, or pass --allow-skips to run without\n",
    );
    expect(run.stderr).not.toContain(MARKER);
    expect(readFileSync(marker, "utf8")).toBe("");
  });

  it("a context key that is no identifier and a context value over the per-value cap", () => {
    const big = tmp.write("big.txt", `${MARKER}${"b".repeat(130_000)}`);
    expectUsage(
      ["run", "--context", `bad.key=${MARKER}`, "--context", `blob=@${big}`, "--", "true"],
      "exactspawn run: --context bad.key (invalid_identifier), --context blob (value_too_large) " +
        "do not reach the step (see exactspawn explain); fix it, or pass --allow-skips to run without",
    );
  });

  it("names every one of them (issue 21, finding 8: a count hid which values were lost)", () => {
    const args = ["run"];
    for (const name of ["a-1", "b-2", "c-3", "d-4", "e-5"]) args.push("--var", `${name}=x`);
    expectUsage(
      [...args, "--", "true"],
      "exactspawn run: --var a-1 (invalid_identifier), --var b-2 (invalid_identifier), " +
        "--var c-3 (invalid_identifier), --var d-4 (invalid_identifier), " +
        "--var e-5 (invalid_identifier) do not reach the step (see exactspawn explain); " +
        "fix it, or pass --allow-skips to run without",
    );
  });

  it("--allow-skips runs the step anyway; a value that reaches under one of its names is fine", () => {
    const skipped = cli(["run", "--allow-skips", "--var", "my-var=1", "--", "echo ran"]);
    expect(skipped.status).toBe(0);
    expect(skipped.stdout).toBe("ran\n");
    // LD_PRELOAD (the alias) is refused, RECIPE_VAR_ld_preload reaches the step.
    const alias = cli(["run", "--var", "ld_preload=v", "--", 'printf %s "$RECIPE_VAR_ld_preload"']);
    expect(alias.status).toBe(0);
    expect(alias.stdout).toBe("v");
  });
});

describe("our own words for every bad flag", () => {
  it.each([
    [
      ["run", "--exec-limit", "-5", "--", "true"],
      "exactspawn run: --exec-limit expects a byte count such as 262144, 256K, 2M",
    ],
    [["run", "--exec-limit"], "exactspawn run: --exec-limit needs a value"],
    [["run", "--exec-limit", "--", "true"], "exactspawn run: --exec-limit needs a value"],
    [
      ["run", "--parent-env", "/nope", "--", "true"],
      "exactspawn run: --parent-env: cannot read /nope (ENOENT)",
    ],
    [
      ["run", "--bogus", "--", "true"],
      'exactspawn run: unknown option --bogus (see "exactspawn run --help")',
    ],
    [
      ["run", "-q", "--", "true"],
      'exactspawn run: unknown option -q (see "exactspawn run --help")',
    ],
    [["run", "--verbose=yes", "--", "true"], "exactspawn run: --verbose takes no value"],
    [
      ["run", "--timeout", "-1", "--", "true"],
      "exactspawn run: --timeout expects a positive duration (300ms, 1.5s, 2m, 1h; a bare number is seconds)",
    ],
    [
      ["run", "--timeout", "30000", "--", "true"],
      "exactspawn run: --timeout 30000: a bare number is seconds (8 h 20 min); did you mean 30000ms? Write 30000ms, or 30000s for seconds",
    ],
    [["run", "--var", MARKER, "--", "true"], "exactspawn run: --var expects NAME=VALUE"],
    [
      ["run", "--log-level", "loud", "--", "true"],
      "exactspawn run: --log-level must be one of trace, debug, info, warn, error, fatal, silent",
    ],
    [["explain", "--json=1"], "exactspawn explain: --json takes no value"],
    [["explain", "--allow", "A=B"], "exactspawn explain: --allow #1 must not contain '=' or NUL"],
    [["limits", "extra"], "exactspawn limits: limits takes no arguments"],
    [
      ["limits", "--json", "--all"],
      'exactspawn limits: unknown option --all (see "exactspawn limits --help")',
    ],
    [["bench", "--dir"], "exactspawn bench: --dir needs a value"],
    [["--nope"], 'exactspawn: unknown option "--nope" (try --help)'],
    [["frobnicate"], 'exactspawn: unknown command "frobnicate" (try --help)'],
  ])("%j", (args, line) => expectUsage(args, line));
});

describe("explain names the limit each variable hit", () => {
  it("per-value cap, per-string limit and budget", () => {
    const env = tmp.write(
      "limits.env",
      [
        "PATH=/usr/bin:/bin",
        "EXACTSPAWN_BASH=/bin/bash",
        `HUGE=${"h".repeat(140_000)}`,
        `FILLER_A=${"a".repeat(70_000)}`,
        `FILLER_B=${"b".repeat(69_000)}`,
      ].join("\n"),
    );
    const big = tmp.write("big.txt", "v".repeat(130_000));
    const mid = tmp.write("mid.txt", "m".repeat(40_000));
    const run = cli([
      "explain",
      "--json",
      "--env-file",
      env,
      "--inherit",
      "all",
      "--exec-limit",
      "128K",
      "--var",
      `big=@${big}`,
      "--var",
      `mid=@${mid}`,
    ]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as {
      variables: { name: string; fate: string; limit: string | null; reason: string | null }[];
    };
    const of = (name: string) => report.variables.find((v) => v.name === name);
    expect(of("HUGE")).toMatchObject({
      fate: "dropped",
      limit: "per-string limit",
      reason: "too_large",
    });
    expect(of("RECIPE_VAR_big")).toMatchObject({
      fate: "spilled",
      limit: "per-value cap",
      reason: "over the per-value cap of 126,976 bytes",
    });
    expect(of("RECIPE_VAR_mid")).toMatchObject({
      fate: "spilled",
      limit: "budget",
      reason: "to fit the exec limit (budget)",
    });
    // Step values spill first; only then is the largest inherited variable trimmed.
    expect(of("FILLER_A")).toMatchObject({ fate: "trimmed", limit: "budget" });
    expect(of("FILLER_B")).toMatchObject({ fate: "inline", limit: null, reason: null });
    const table = cli([
      "explain",
      "--env-file",
      env,
      "--inherit",
      "all",
      "--exec-limit",
      "128K",
      "--var",
      `big=@${big}`,
    ]);
    expect(table.stdout).toMatch(
      /HUGE\s+dropped\s+inherited\s+-?[\d,]*\s+too_large \(per-string limit\)/,
    );
  });

  it("hints at --allow / --parent-env when most inherited variables are npm's", () => {
    const lines = ["PATH=/usr/bin:/bin", "HOME=/home/u", "EXACTSPAWN_BASH=/bin/bash"];
    for (let i = 0; i < 10; i++) lines.push(`npm_config_option_${i}=value-${i}`);
    const npmEnv = tmp.write("npm.env", lines.join("\n"));
    const run = cli(["explain", "--env-file", npmEnv]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /\nhint {9}10 of 13 inherited variables \([^)]+\) come from the package runner \(npm_\*\): choose what is inherited with --allow NAME or --parent-env FILE, or run exactspawn directly\n$/,
    );
    const json = JSON.parse(cli(["explain", "--json", "--env-file", npmEnv]).stdout);
    expect(json.hints).toHaveLength(1);
    // 3 of 10 variables and a small share of the bytes: no hint.
    const few = [...lines.slice(0, 6), `OTHER_A=${"a".repeat(200)}`, "B=1", "C=1", "D=1"];
    const fewEnv = tmp.write("few.env", few.join("\n"));
    expect(JSON.parse(cli(["explain", "--json", "--env-file", fewEnv]).stdout).hints).toEqual([]);
  });
});
