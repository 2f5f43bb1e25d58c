import { describe, expect, it } from "vitest";
import { boundedEnv } from "../../src/env/bounded-env.js";
import { defaultProtectedNames } from "../../src/env/names.js";
import { EnvBudgetError, InvalidEnvError } from "../../src/errors.js";
import { execFits } from "../../src/limits.js";
import { captureLog } from "../helpers/capture-log.js";

const FILE = "/usr/bin/agent";
const ARGV = ["agent", "--run"];
const SENTINEL = "SENTINEL-b0unded";

function sized(name: string, bytes: number): [string, string] {
  return [name, SENTINEL + "v".repeat(bytes - name.length - 2 - SENTINEL.length)];
}

const env = new Map([
  sized("PATH", 100),
  sized("BIG_A", 20_000),
  sized("BIG_B", 20_000),
  sized("SMALL", 5_000),
  sized("EXACTSPAWN_STATE", 30_000),
  sized("RECIPE_VAR_x", 10_000),
  sized("OVERLAY", 8_000),
]);
const inherited = new Set(["PATH", "BIG_A", "BIG_B", "SMALL", "EXACTSPAWN_STATE"]);
const footprint = (names: string[]) =>
  execFits(
    FILE,
    ARGV,
    [...env].filter(([n]) => !names.includes(n)).map(([n, v]) => `${n}=${v}`),
    { execLimit: 1e9, maxArgStrlen: 131_072 },
  ).footprint;

function run(execLimit: number, log = captureLog()) {
  return boundedEnv({
    env,
    inheritedNames: inherited,
    file: FILE,
    argv: ARGV,
    limits: { execLimit, maxArgStrlen: 131_072 },
    log: log.logger,
  });
}

describe("boundedEnv", () => {
  it("returns the input unchanged when it fits", () => {
    const result = run(footprint([]));
    expect([...result.env]).toEqual([...env]);
    expect(result.dropped).toEqual([]);
    expect(result.footprint).toBe(footprint([]));
  });

  it.each([
    ["one byte over", footprint([]) - 1, ["BIG_A"]],
    ["tie broken by name", footprint(["BIG_A"]) - 1, ["BIG_A", "BIG_B"]],
    ["every droppable", footprint(["BIG_A", "BIG_B"]) - 1, ["BIG_A", "BIG_B", "SMALL"]],
  ])("drops inherited non-protected variables largest first: %s", (_l, limit, expected) => {
    const capture = captureLog();
    const result = run(limit, capture);
    expect(result.dropped.map((d) => d.name)).toEqual(expected);
    expect(
      result.dropped.every((d) => d.bytes === env.get(d.name)!.length + d.name.length + 2),
    ).toBe(true);
    const verdict = execFits(FILE, ARGV, result.env, { execLimit: limit, maxArgStrlen: 131_072 });
    expect(verdict.fits).toBe(true);
    expect(result.footprint).toBe(verdict.footprint);
    const warned = capture
      .events()
      .filter((r) => r["level"] === 40)
      .map((r) => r["variable"]);
    expect(warned).toEqual(expected);
    expect(capture.lines.join("")).not.toContain(SENTINEL);
    // Protected, and not inherited, survive.
    for (const name of ["PATH", "EXACTSPAWN_STATE", "RECIPE_VAR_x", "OVERLAY"]) {
      expect(result.env.has(name)).toBe(true);
    }
  });

  it("uses sizes already measured, and measures a name they miss", () => {
    const limit = footprint([]) - 1;
    const given = (sizes: Map<string, number>) =>
      boundedEnv({
        env,
        inheritedNames: inherited,
        file: FILE,
        argv: ARGV,
        limits: { execLimit: limit, maxArgStrlen: 131_072 },
        sizes,
        log: captureLog().logger,
      });
    const exact = new Map([...env].map(([n, v]) => [n, n.length + v.length + 2]));
    expect(given(exact).dropped.map((d) => d.name)).toEqual(["BIG_A"]);
    // Trusted as given: one byte more for BIG_B makes it the largest.
    const skewed = new Map(exact).set("BIG_B", exact.get("BIG_B")! + 1);
    expect(given(skewed).dropped).toEqual([{ name: "BIG_B", bytes: 20_001 }]);
    // A name missing from the sizes is measured, never counted as zero.
    const partial = new Map(exact);
    partial.delete("BIG_A");
    const result = given(partial);
    expect(result.dropped.map((d) => d.name)).toEqual(["BIG_A"]);
    expect(result.footprint).toBe(footprint(["BIG_A"]));
  });

  it("throws EnvBudgetError with names, sizes, budget and total, never values", () => {
    const limit = footprint(["BIG_A", "BIG_B", "SMALL"]) - 1;
    let error: unknown;
    try {
      run(limit);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvBudgetError);
    const budgetError = error as EnvBudgetError;
    expect(budgetError.offenders.map((o) => o.name)).toEqual([
      "EXACTSPAWN_STATE",
      "RECIPE_VAR_x",
      "OVERLAY",
      "PATH",
    ]);
    expect(budgetError.offenders[0]).toEqual({ name: "EXACTSPAWN_STATE", bytes: 30_000 });
    const argvPart = Buffer.byteLength(FILE) + 1 + 6 + 6 + 16;
    expect(budgetError.budget).toBe(limit - argvPart);
    expect(budgetError.totalBytes).toBe(footprint(["BIG_A", "BIG_B", "SMALL"]) - argvPart);
    expect(budgetError.message).toContain("EXACTSPAWN_STATE (30000 bytes)");
    expect(budgetError.message).toContain(String(budgetError.budget));
    expect(`${budgetError.message}${budgetError.stack}`).not.toContain(SENTINEL);
  });

  it("honours a custom protected set", () => {
    const result = boundedEnv({
      env,
      inheritedNames: inherited,
      protected: { names: ["BIG_A"], prefixes: [] },
      file: FILE,
      argv: ARGV,
      limits: { execLimit: footprint([]) - 1, maxArgStrlen: 131_072 },
      log: captureLog().logger,
    });
    expect(result.dropped.map((d) => d.name)).toEqual(["EXACTSPAWN_STATE"]);
  });

  it("drops an inherited variable over the per-string limit even when the total fits", () => {
    const big = new Map([sized("HUGE", 131_073), sized("PATH", 50)]);
    const result = boundedEnv({
      env: big,
      inheritedNames: new Set(["HUGE", "PATH"]),
      file: FILE,
      argv: ARGV,
      limits: { execLimit: 6 * 1024 * 1024, maxArgStrlen: 131_072 },
      log: captureLog().logger,
    });
    expect(result.dropped).toEqual([{ name: "HUGE", bytes: 131_073 }]);
  });

  it("accepts a measured argv and rejects an argv string over the per-string limit", () => {
    expect(
      boundedEnv({
        env: new Map([["A", "1"]]),
        inheritedNames: new Set(),
        file: FILE,
        argv: { bytes: 100, argc: 2 },
        limits: { execLimit: 1000, maxArgStrlen: 131_072 },
      }).footprint,
    ).toBe(Buffer.byteLength(FILE) + 1 + 100 + 16 + 4 + 8);
    expect(() =>
      boundedEnv({
        env: new Map(),
        inheritedNames: new Set(),
        file: FILE,
        argv: ["x".repeat(131_072)],
        limits: { execLimit: 1e9, maxArgStrlen: 131_072 },
      }),
    ).toThrow(InvalidEnvError);
  });

  it("uses the seed's protected names by default", () => {
    const names = defaultProtectedNames();
    expect(names.names).toContain("PATH");
    expect(names.prefixes).toEqual(["EXACTSPAWN_", "RECIPE_VAR_"]);
  });
});

describe("boundedEnv with a protected string over the per-string limit", () => {
  it("throws a per-string EnvBudgetError at once and drops nothing on the way", () => {
    const capture = captureLog();
    const env = new Map([
      ["EXACTSPAWN_STATE", "s".repeat(200 * 1024)],
      ["BIG_INHERITED", "i".repeat(50 * 1024)],
    ]);
    let caught: unknown;
    try {
      boundedEnv({
        env,
        inheritedNames: new Set(["BIG_INHERITED"]),
        file: "/bin/bash",
        argv: ["bash"],
        limits: { execLimit: 2 * 1024 * 1024, maxArgStrlen: 131072 },
        log: capture.logger,
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EnvBudgetError);
    const error = caught as EnvBudgetError;
    expect(error.kind).toBe("per-string");
    expect(error.budget).toBe(131072);
    expect(error.offenders).toEqual([{ name: "EXACTSPAWN_STATE", bytes: 200 * 1024 + 18 }]);
    expect(error.message).toMatch(/over the per-string limit of 131072 bytes/);
    expect(capture.lines).toEqual([]);
  });
});
