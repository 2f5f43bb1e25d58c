import { describe, expect, it } from "vitest";
import { freezeMap } from "../../src/env/frozen-map.js";
import { planSpill, type SpillPlanInput } from "../../src/env/spill-plan.js";
import { SpillError } from "../../src/errors.js";
import { execFits, PER_VALUE_ENV_CAP } from "../../src/limits.js";
import { bashArgvSizer } from "../../src/step/bash-script.js";
import { captureLog } from "../helpers/capture-log.js";

const BIG = { execLimit: 6 * 1024 * 1024, maxArgStrlen: 131_072 };
const FILE = "/bin/bash";
const fixedArgv = () => ({ bytes: 20, argc: 3 });

function plan(
  env: Record<string, string>,
  stepNames: string[],
  extra: Partial<SpillPlanInput> = {},
) {
  const { logger: log } = captureLog();
  return planSpill({
    env: new Map(Object.entries(env)),
    stepNames: new Set(stepNames),
    file: FILE,
    argvBytes: fixedArgv,
    limits: BIG,
    log,
    ...extra,
  });
}

/** A value making NAME=value\0 exactly `bytes` bytes. */
function valueFor(name: string, bytes: number): string {
  return "v".repeat(bytes - name.length - 2);
}

describe("planSpill phase 1: the per-value cap, judged per name", () => {
  const cases: [string, number, boolean][] = [
    ["RECIPE_VAR_x", PER_VALUE_ENV_CAP - 1, false],
    ["RECIPE_VAR_x", PER_VALUE_ENV_CAP, false],
    ["RECIPE_VAR_x", PER_VALUE_ENV_CAP + 1, true],
    ["X", PER_VALUE_ENV_CAP - 1, false],
    ["X", PER_VALUE_ENV_CAP, false],
    ["X", PER_VALUE_ENV_CAP + 1, true],
  ];
  it.each(cases)("%s at %i bytes spills: %s", (name, bytes, spills) => {
    const result = plan({ [name]: valueFor(name, bytes), OTHER: "1" }, [name]);
    expect(result.spilled).toEqual(spills ? [{ name, bytes }] : []);
    expect(result.inline.has(name)).toBe(!spills);
    expect(result.fits).toBe(true);
  });

  it("spills RECIPE_VAR_x while its alias X, 11 bytes shorter, stays inline", () => {
    const value = valueFor("RECIPE_VAR_x", PER_VALUE_ENV_CAP + 1);
    const result = plan({ RECIPE_VAR_x: value, X: value }, ["RECIPE_VAR_x", "X"]);
    expect(result.spilled.map((s) => s.name)).toEqual(["RECIPE_VAR_x"]);
    expect(result.inline.get("X")).toBe(value);
  });

  it("takes step names as any iterable, a name listed twice counting once", () => {
    const big = "v".repeat(PER_VALUE_ENV_CAP);
    const env = { B: big, A: big, C: "small" };
    const once = plan(env, ["B", "A", "C"]);
    const twice = plan(env, [], { stepNames: ["A", "B", "A", "C", "B"] });
    expect(twice.spilled).toEqual(once.spilled);
    expect(twice.footprint).toBe(once.footprint);
    expect([...twice.inline]).toEqual([...once.inline]);
  });

  it("lists phase-1 spills in name order whatever the env order", () => {
    const big = "v".repeat(PER_VALUE_ENV_CAP);
    const result = plan({ B: big, A: big, C: "small" }, ["B", "A", "C"]);
    expect(result.spilled.map((s) => s.name)).toEqual(["A", "B"]);
    expect([...result.inline.keys()]).toEqual(["C"]);
  });

  it("counts UTF-8 bytes, not string length", () => {
    // "é" is 2 bytes: 63,487 of them make RECIPE_VAR_x=…\0 = 126,988 > cap.
    const value = "é".repeat(Math.ceil((PER_VALUE_ENV_CAP - 13) / 2));
    const result = plan({ RECIPE_VAR_x: value }, ["RECIPE_VAR_x"]);
    expect(result.spilled).toHaveLength(1);
  });

  it("never spills a variable that is not a step value", () => {
    const big = "v".repeat(PER_VALUE_ENV_CAP + 10);
    const result = plan({ INHERITED: big, RECIPE_VAR_a: "1" }, ["RECIPE_VAR_a"]);
    expect(result.spilled).toEqual([]);
    expect(result.inline.get("INHERITED")).toBe(big);
  });
});

describe("planSpill phase 2: the total", () => {
  // Three step values of 30,000, 30,000 and 20,000 bytes; a limit that needs two of them out.
  const env = {
    RECIPE_VAR_b: valueFor("RECIPE_VAR_b", 30_000),
    RECIPE_VAR_a: valueFor("RECIPE_VAR_a", 30_000),
    RECIPE_VAR_c: valueFor("RECIPE_VAR_c", 20_000),
    INHERITED: valueFor("INHERITED", 50_000),
  };
  const steps = ["RECIPE_VAR_a", "RECIPE_VAR_b", "RECIPE_VAR_c"];
  const footprintOf = (names: string[]) => {
    const inline = Object.entries(env).filter(([n]) => !names.includes(n));
    return execFits(FILE, ["bash", "-c", "x".repeat(11)], Object.fromEntries(inline), BIG)
      .footprint;
  };

  it.each([
    ["nothing over budget", footprintOf([]), []],
    ["one byte over", footprintOf([]) - 1, ["RECIPE_VAR_a"]],
    [
      "needs two, tie goes to the first name",
      footprintOf(["RECIPE_VAR_a"]) - 1,
      ["RECIPE_VAR_a", "RECIPE_VAR_b"],
    ],
    ["needs all three", footprintOf(["RECIPE_VAR_a", "RECIPE_VAR_b"]) - 1, steps],
    ["cannot fit at all", 1000, steps],
  ])("%s", (_label, execLimit, expected) => {
    const limits = { execLimit, maxArgStrlen: 131_072 };
    const result = plan(env, steps, { limits });
    expect(result.spilled.map((s) => s.name)).toEqual(expected);
    const check = execFits(FILE, ["bash", "-c", "x".repeat(11)], result.inline, limits);
    expect(result.footprint).toBe(check.footprint);
    expect(result.fits).toBe(check.fits);
    expect(result.inline.get("INHERITED")).toBe(env.INHERITED);
  });

  it("counts the argv growth the preamble brings", () => {
    const calls: string[][] = [];
    const result = plan(env, steps, {
      limits: { execLimit: footprintOf([]) - 1, maxArgStrlen: 131_072 },
      argvBytes: (spilled) => {
        calls.push([...spilled]);
        return { bytes: 20 + spilled.length * 40_000, argc: 3 };
      },
    });
    // Spilling a costs more argv than it saves: it keeps going, then reports no fit.
    expect(calls[0]).toEqual([]);
    expect(result.spilled.map((s) => s.name)).toEqual(steps);
    expect(result.fits).toBe(false);
  });

  it("never spills an empty value, even when over budget", () => {
    const result = plan({ RECIPE_VAR_e: "", RECIPE_VAR_f: "1" }, ["RECIPE_VAR_e", "RECIPE_VAR_f"], {
      limits: { execLimit: 10, maxArgStrlen: 131_072 },
    });
    expect(result.spilled.map((s) => s.name)).toEqual(["RECIPE_VAR_f"]);
    expect(result.inline.has("RECIPE_VAR_e")).toBe(true);
  });

  it("does not spill unspillable names in phase 2 (they stay inline)", () => {
    const result = plan({ "my-var": "x".repeat(1000), PATH: "/bin" }, ["my-var", "PATH"], {
      limits: { execLimit: 10, maxArgStrlen: 131_072 },
    });
    expect(result.spilled).toEqual([]);
    expect(result.dropped).toEqual([]);
    expect(result.fits).toBe(false);
  });
});

describe("planSpill: unspillable names, NUL and identity", () => {
  it("drops an over-cap step value with an unspillable name and warns once, name and size", () => {
    const capture = captureLog();
    const big = "s3cr3t-".repeat(20_000);
    const result = planSpill({
      env: new Map([
        ["BASH_ENV", big],
        ["my-var", big],
        ["KEEP", "1"],
      ]),
      stepNames: new Set(["BASH_ENV", "my-var"]),
      file: FILE,
      argvBytes: fixedArgv,
      limits: BIG,
      log: capture.logger,
    });
    expect(result.dropped).toEqual([
      { name: "BASH_ENV", bytes: 140_010, reason: "over_cap_unspillable_name" },
      { name: "my-var", bytes: 140_008, reason: "over_cap_unspillable_name" },
    ]);
    expect([...result.inline.keys()]).toEqual(["KEEP"]);
    const warns = capture.events().filter((r) => r["level"] === 40);
    expect(warns.map((w) => [w["variable"], w["bytes"]])).toEqual([
      ["BASH_ENV", 140_010],
      ["my-var", 140_008],
    ]);
    expect(capture.lines.join("")).not.toContain("s3cr3t");
  });

  it("throws SpillError naming the variable and its byte length for a NUL value that must spill", () => {
    const value = `SENTINEL-7f3a\0${"z".repeat(PER_VALUE_ENV_CAP)}`;
    let error: unknown;
    try {
      plan({ RECIPE_VAR_n: value }, ["RECIPE_VAR_n"]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SpillError);
    const spillError = error as SpillError;
    expect(spillError.code).toBe("ERR_EXACTSPAWN_SPILL_NUL");
    expect(spillError.variable).toBe("RECIPE_VAR_n");
    expect(spillError.bytes).toBe(Buffer.byteLength(value));
    expect(spillError.message).toContain("RECIPE_VAR_n");
    expect(spillError.message).toContain(String(Buffer.byteLength(value)));
    expect(`${spillError.message}${spillError.stack}`).not.toContain("SENTINEL-7f3a");
  });

  it("leaves a NUL value alone when it does not have to spill", () => {
    const result = plan({ RECIPE_VAR_n: "a\0b" }, ["RECIPE_VAR_n"]);
    expect(result.spilled).toEqual([]);
  });

  it("returns the input unchanged, in order, when nothing spills", () => {
    const env = { Z: "1", A: "2", RECIPE_VAR_m: "3", M: "3" };
    const result = plan(env, ["RECIPE_VAR_m", "M"]);
    expect([...result.inline]).toEqual(Object.entries(env));
    expect(result.spilled).toEqual([]);
    expect(result.dropped).toEqual([]);
  });

  it("agrees with the real bash argv sizer and execFits", () => {
    const command = "echo hi";
    const value = "v".repeat(PER_VALUE_ENV_CAP - 13);
    const argvBytes = bashArgvSizer({ bash: FILE, command, value: () => value });
    const result = planSpill({
      env: new Map([
        ["RECIPE_VAR_r", value],
        ["R", value],
      ]),
      stepNames: new Set(["RECIPE_VAR_r", "R"]),
      file: FILE,
      argvBytes,
      limits: BIG,
      log: captureLog().logger,
    });
    expect(result.spilled.map((s) => s.name)).toEqual(["RECIPE_VAR_r"]);
    expect(result.argv.argc).toBe(3);
  });
});

describe("planSpill: measuring", () => {
  it("measures a map the library froze once and a plain map every time, with the same sizes", () => {
    const entries: [string, string][] = [
      ["A", "é"],
      ["RECIPE_VAR_x", "12345"],
    ];
    const input = (env: ReadonlyMap<string, string>) => ({
      env,
      stepNames: ["RECIPE_VAR_x"],
      file: FILE,
      argvBytes: fixedArgv,
      limits: BIG,
      log: captureLog().logger,
    });
    const frozen = freezeMap(new Map(entries));
    const first = planSpill(input(frozen));
    expect(planSpill(input(frozen)).sizes).toBe(first.sizes);
    expect([...first.sizes]).toEqual([
      ["A", 5],
      ["RECIPE_VAR_x", 19],
    ]);
    const plain = new Map(entries);
    const once = planSpill(input(plain));
    expect(planSpill(input(plain)).sizes).not.toBe(once.sizes);
    plain.set("A", "abc");
    expect(planSpill(input(plain)).sizes.get("A")).toBe(6);
    expect(once.footprint).toBe(first.footprint);
  });
});
