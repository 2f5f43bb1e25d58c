/**
 * `exactspawn explain` run as a user would: a machine-independent snapshot of
 * a crafted environment (--env-file, pinned bash, --exec-limit), the stable
 * exactspawn.explain/v1 key sets, exit codes, and no value ever printed.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/native.js";
import { cli, scratch } from "../helpers/run-cli.js";

const ENV_FILE = join(PACKAGE_ROOT, "test/fixtures/cli/parent.env");
const MARKER = "sentinel-7f3a";
const tmp = scratch();
afterAll(() => tmp.remove());

// An inherited variable big enough to be trimmed under an 8 KiB limit, and a
// step value over that budget (so it spills). Both carry the marker.
const envFile = tmp.write(
  "parent.env",
  `PATH=/usr/bin:/bin\nHOME=/home/fixture\nLANG=C.UTF-8\nEXACTSPAWN_BASH=/bin/bash\nTMPDIR=/tmp\nSERVICE_TOKEN=${MARKER}-token\nNOISE=${MARKER}${"n".repeat(8000)}\n`,
);
const report = tmp.write("report.txt", `${MARKER}${"r".repeat(20_000)}`);
const crafted = [
  "--env-file",
  envFile,
  "--inherit",
  "all",
  "--exec-limit",
  "8K",
  "--block",
  "SERVICE_TOKEN",
  "--context",
  `ld_preload=${MARKER}-preload`,
  "--context",
  `bad key=${MARKER}`,
  "--context",
  `ticket=${MARKER}-ticket`,
  "--var",
  `report=@${report}`,
  "--var",
  "count=3",
];

describe("exactspawn explain", () => {
  it("shows every variable's fate, origin, size and reason for a crafted environment", () => {
    const run = cli(["explain", ...crafted, "--", "echo hi"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatchInlineSnapshot(`
      "NAME               FATE     ORIGIN      BYTES  REASON
      CTX_BAD KEY        skipped  context         -  invalid_identifier
      CTX_LD_PRELOAD     inline   context        37
      CTX_TICKET         inline   context        32
      EXACTSPAWN_BASH    inline   inherited      26
      HOME               inline   inherited      19
      LANG               inline   inherited      13
      NOISE              trimmed  inherited   8,020  over budget from trusted variables: largest non-protected inherited variable
      PATH               inline   inherited      19
      RECIPE_VAR_count   spilled  step           19  to fit the exec limit (budget)
      RECIPE_VAR_report  spilled  step       20,032  to fit the exec limit (budget)
      SERVICE_TOKEN      dropped  inherited      34  blocked
      TMPDIR             inline   inherited      12

      interpreter  /bin/bash (script inline, bash -c, 7 B command)
      budget       [##..............................] 7.6%: footprint 622 B of exec limit 8,192 B (8 KiB) (option)
      totals       12 variables: 7 inline (158 B), 2 spilled (20,051 B (19.6 KiB)), 1 trimmed (8,020 B (7.8 KiB)), 1 skipped, 1 dropped (34 B)
      "
    `);
  });

  it("prints the exactspawn.explain/v1 schema with exact key sets", () => {
    const run = cli(["explain", ...crafted, "--json", "--", "echo hi"]);
    expect(run.status).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(Object.keys(json).sort()).toEqual(
      [
        "commandBytes",
        "footprint",
        "headroom",
        "hints",
        "interpreter",
        "limits",
        "schema",
        "scriptMode",
        "totals",
        "used",
        "variables",
      ].sort(),
    );
    expect(json.schema).toBe("exactspawn.explain/v1");
    expect(Object.keys(json.limits).sort()).toEqual(["execLimit", "maxArgStrlen", "source"]);
    expect(json.limits).toEqual({ execLimit: 8192, maxArgStrlen: 8192, source: "option" });
    expect(Object.keys(json.totals).sort()).toEqual(
      ["dropped", "inline", "skipped", "spilled", "trimmed", "variables"].sort(),
    );
    for (const fate of ["dropped", "inline", "skipped", "spilled", "trimmed"]) {
      expect(Object.keys(json.totals[fate]).sort()).toEqual(["bytes", "count"]);
    }
    for (const variable of json.variables) {
      expect(Object.keys(variable).sort()).toEqual([
        "bytes",
        "fate",
        "limit",
        "name",
        "origin",
        "reason",
      ]);
    }
    const byName = Object.fromEntries(json.variables.map((v: { name: string }) => [v.name, v]));
    // Context keys are namespaced by default: ld_preload cannot reach LD_PRELOAD.
    expect(byName["LD_PRELOAD"]).toBeUndefined();
    expect(byName["CTX_LD_PRELOAD"]).toMatchObject({ fate: "inline", origin: "context" });
    expect(byName["BAD KEY"]).toBeUndefined();
    expect(byName["RECIPE_VAR_report"]).toMatchObject({ fate: "spilled", bytes: 20_032 });
    expect(byName["NOISE"]).toMatchObject({
      fate: "trimmed",
      origin: "inherited",
      limit: "budget",
    });
    expect(byName["SERVICE_TOKEN"]).toMatchObject({ fate: "dropped", reason: "blocked" });
    expect(byName["CTX_TICKET"]).toMatchObject({ fate: "inline", origin: "context" });
    expect(json.footprint).toBeLessThanOrEqual(8192);
    expect(json.headroom).toBe(8192 - json.footprint);
    expect(json.totals.variables).toBe(json.variables.length);
    expect(json.interpreter).toBe("/bin/bash");
  });

  it("never prints a value: not in the table, the JSON or debug logs", () => {
    for (const extra of [[], ["--json"], ["--log-level", "trace"]]) {
      const run = cli(["explain", ...crafted, ...extra]);
      expect(run.status).toBe(0);
      expect(run.stdout).not.toContain(MARKER);
      expect(run.stderr).not.toContain(MARKER);
    }
    const fixture = cli(["explain", "--env-file", ENV_FILE, "--json"]);
    expect(fixture.status).toBe(0);
    expect(fixture.stdout).toContain("SERVICE_TOKEN");
    expect(fixture.stdout).not.toContain(MARKER);
  });

  it("defaults COMMAND to true and uses this process's environment without --env-file", () => {
    const run = cli(["explain", "--json"], { env: { EXACTSPAWN_CLI_PROBE: "1" } });
    expect(run.status).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.commandBytes).toBe(4);
    expect(json.variables.map((v: { name: string }) => v.name)).toContain("EXACTSPAWN_CLI_PROBE");
  });

  it("exits 1 with one line when protected variables alone exceed the budget", () => {
    const tight = tmp.write(
      "tight.env",
      `PATH=/usr/bin:/bin:${"/x".repeat(400)}\nEXACTSPAWN_BASH=/bin/bash\n`,
    );
    const run = cli(["explain", "--env-file", tight, "--exec-limit", "512"]);
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(/^exactspawn explain: /);
  });

  it("answers --help and exits 2 with one line for usage errors", () => {
    const help = cli(["explain", "--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: exactspawn explain/);
    for (const args of [
      ["--bogus"],
      ["--var", `${MARKER}`],
      ["--context", `=${MARKER}`],
      ["--var", "x=@/nonexistent/file"],
      ["--parent-env", "/nonexistent/env"],
      ["--exec-limit", "lots"],
      ["--log-level", "loud"],
      ["--allow", `A=${MARKER}`],
    ]) {
      const run = cli(["explain", ...args]);
      expect(run.status, args.join(" ")).toBe(2);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).not.toContain(MARKER);
    }
    const bad = tmp.write("bad.env", `GOOD=1\n${MARKER} no equals sign\n`);
    const run = cli(["explain", "--env-file", bad]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("bad.env:2");
    expect(run.stderr).not.toContain(MARKER);
  });
});

describe("exactspawn explain: filters and the summary", () => {
  const big = scratch();
  afterAll(() => big.remove());
  const manyKeys = big.write(
    "context.json",
    JSON.stringify(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`key_${i}`, "v"]))),
  );

  it("a big table prints its summary only, and says how to list it", () => {
    const run = cli(["explain", "--context-file", manyKeys]);
    expect(run.status).toBe(0);
    expect(run.stdout).not.toContain("CTX_KEY_0 ");
    expect(run.stdout).toMatch(/^totals {7}\d+ variables: /m);
    expect(run.stdout).toMatch(/^listed {7}none of \d+ variables: filter with --fate/m);
    const all = cli(["explain", "--context-file", manyKeys, "--all"]);
    expect(all.stdout).toMatch(/^CTX_KEY_0 /m);
  });

  it("--fate, --origin and --name filter the rows (and the JSON's variables); totals stay whole", () => {
    const run = cli([
      "explain",
      "--context-file",
      manyKeys,
      "--origin",
      "context",
      "--name",
      "CTX_KEY_1?",
    ]);
    expect(run.status).toBe(0);
    const rows = run.stdout.split("\n").filter((line) => line.startsWith("CTX_"));
    expect(rows).toHaveLength(10);
    expect(run.stdout).toMatch(/^listed {7}10 of \d+ variables$/m);
    const json = JSON.parse(
      cli(["explain", "--json", "--context-file", manyKeys, "--fate", "inline", "--name", "PATH"])
        .stdout,
    ) as { variables: { name: string }[]; totals: { variables: number } };
    expect(json.variables.map((v) => v.name)).toEqual(["PATH"]);
    expect(json.totals.variables).toBeGreaterThan(300);
    const bad = cli(["explain", "--fate", "gone"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(
      "--fate must be one of inline, spilled, trimmed, skipped, dropped",
    );
  });
});
