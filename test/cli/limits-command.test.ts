/** `exactspawn limits` run as a user would: exit codes, the table, a stable --json schema. */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/native.js";

const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ["dist/cli.js", ...args], {
    cwd: PACKAGE_ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", ...env },
  });

describe("exactspawn limits", () => {
  it("prints a table of the probed values and the budget", () => {
    const run = cli(["limits"]);
    expect(run.status).toBe(0);
    for (const label of ["RLIMIT_STACK soft", "exec limit", "per-string limit", "env budget"]) {
      expect(run.stdout).toContain(label);
    }
    expect(run.stdout).toMatch(/per-string limit\s+131,072 B \(128 KiB\)/);
  });

  it("prints the limits/v1 JSON schema with --json", () => {
    const run = cli(["limits", "--json"]);
    expect(run.status).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(Object.keys(json).sort()).toEqual(
      [
        "argMax",
        "envBudget",
        "errors",
        "execLimit",
        "fallbackReason",
        "maxArgStrlen",
        "native",
        "pageSize",
        "schema",
        "source",
        "stackHard",
        "stackSoft",
      ].sort(),
    );
    expect(json.schema).toBe("exactspawn.limits/v1");
    expect(json.maxArgStrlen).toBe(131072);
  });

  it("shows the fallback and its reason when the addon is off", () => {
    const run = cli(["limits", "--json"], { EXACTSPAWN_NATIVE: "0" });
    expect(JSON.parse(run.stdout)).toMatchObject({
      source: "fallback",
      native: false,
      execLimit: 262144,
      envBudget: 262144,
      fallbackReason: "disabled by EXACTSPAWN_NATIVE",
    });
  });

  it("answers --help and rejects unknown options with one line and a non-zero exit", () => {
    expect(cli(["limits", "--help"]).stdout).toMatch(/^Usage: exactspawn limits/);
    const bad = cli(["limits", "--bogus"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(cli(["nope"]).status).toBe(2);
  });
});
