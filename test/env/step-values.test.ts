import { describe, expect, it } from "vitest";
import { stepValueEnv } from "../../src/env/step-values.js";

describe("stepValueEnv", () => {
  it("makes RECIPE_VAR_<key> and the upper-case alias, prefixed names first", () => {
    const { env, skipped } = stepValueEnv({ report: "hello", count: 3 });
    expect([...env]).toEqual([
      ["RECIPE_VAR_count", "3"],
      ["RECIPE_VAR_report", "hello"],
      ["COUNT", "3"],
      ["REPORT", "hello"],
    ]);
    expect(skipped).toEqual([]);
  });

  it.each([
    ["string", "a b\n", "a b\n"],
    ["null", null, ""],
    ["number", 1.5, "1.5"],
    ["boolean", true, "true"],
    ["array", [1, "x"], '[1,"x"]'],
    ["empty string", "", ""],
  ])("encodes a %s value", (_kind, value, text) => {
    expect(stepValueEnv({ v: value }).env.get("RECIPE_VAR_v")).toBe(text);
  });

  it("flattens plain objects into <parent>__<key>, recursively, keys sorted", () => {
    const { env } = stepValueEnv({ cfg: { b: { c: "deep" }, a: 1 } });
    expect([...env]).toEqual([
      ["RECIPE_VAR_cfg", '{"b":{"c":"deep"},"a":1}'],
      ["RECIPE_VAR_cfg__a", "1"],
      ["RECIPE_VAR_cfg__b", '{"c":"deep"}'],
      ["RECIPE_VAR_cfg__b__c", "deep"],
      ["CFG", '{"b":{"c":"deep"},"a":1}'],
    ]);
  });

  it("stops flattening at maxDepth and never flattens arrays", () => {
    const { env } = stepValueEnv({ o: { a: { b: 1 } }, l: [{ a: 1 }] }, { maxDepth: 1 });
    expect(env.has("RECIPE_VAR_o__a")).toBe(true);
    expect(env.has("RECIPE_VAR_o__a__b")).toBe(false);
    expect([...env.keys()].filter((n) => n.startsWith("RECIPE_VAR_l"))).toEqual(["RECIPE_VAR_l"]);
  });

  it("honours a custom prefix and separator, and can turn aliases off", () => {
    const { env } = stepValueEnv(new Map([["k", { n: "v" }]]), {
      prefix: "STEP_",
      nestedSeparator: "_x_",
      aliases: false,
    });
    expect([...env]).toEqual([
      ["STEP_k", '{"n":"v"}'],
      ["STEP_k_x_n", "v"],
    ]);
  });

  it.each([
    ["my-key", "MY-KEY", "invalid_identifier"],
    ["9lives", "9LIVES", "invalid_identifier"],
    ["café", "CAFé", "invalid_identifier"],
  ])("skips alias of %s with a reason", (key, alias, reason) => {
    const { env, skipped } = stepValueEnv({ [key]: "v" });
    expect(env.get(`RECIPE_VAR_${key}`)).toBe("v");
    expect(skipped).toContainEqual({ name: alias, reason });
  });

  it("uses the injected aliasFilter for the skip reason", () => {
    const { env, skipped } = stepValueEnv(
      { ld_preload: "x", ok: "y" },
      { aliasFilter: (name) => (name === "LD_PRELOAD" ? "reserved_name" : null) },
    );
    expect(env.has("LD_PRELOAD")).toBe(false);
    expect(env.get("OK")).toBe("y");
    expect(skipped).toEqual([{ name: "LD_PRELOAD", reason: "reserved_name" }]);
  });

  it("resolves collisions deterministically and reports the losers", () => {
    // Aliases: sorted order, last writer wins (REPO_PATH < repo_path).
    const a = stepValueEnv({ repo_path: "lower", REPO_PATH: "upper" });
    expect(a.env.get("REPO_PATH")).toBe("lower");
    expect(a.skipped).toContainEqual({ name: "REPO_PATH", reason: "name_collision" });
    // A top-level key literally named like a nested name: the first claim wins.
    const b = stepValueEnv({ a: { b: "nested" }, a__b: "direct" });
    expect(b.env.get("RECIPE_VAR_a__b")).toBe("nested");
    expect(b.skipped).toContainEqual({ name: "RECIPE_VAR_a__b", reason: "name_collision" });
    // An alias never replaces a prefixed name.
    const c = stepValueEnv({ recipe_var_x: "alias", x: "prefixed" });
    expect(c.env.get("RECIPE_VAR_x")).toBe("prefixed");
    expect(c.env.get("RECIPE_VAR_X")).toBe("alias");
  });

  it("is total on odd input", () => {
    const values = {
      big: 10n,
      fn: () => 1,
      undef: undefined,
      bad: "\ud800",
      "a=b": "v",
      nul: "x\0y",
      throws: {
        toJSON() {
          throw new Error("no");
        },
      },
    };
    const { env, skipped } = stepValueEnv(values);
    expect(env.get("RECIPE_VAR_nul")).toBe("x\0y");
    expect(skipped).toEqual(
      expect.arrayContaining([
        { name: "RECIPE_VAR_big", reason: "unrepresentable_value" },
        { name: "RECIPE_VAR_fn", reason: "unrepresentable_value" },
        { name: "RECIPE_VAR_undef", reason: "unrepresentable_value" },
        { name: "RECIPE_VAR_bad", reason: "value_not_well_formed" },
        { name: "RECIPE_VAR_a=b", reason: "invalid_name" },
        { name: "RECIPE_VAR_throws", reason: "unrepresentable_value" },
      ]),
    );
  });

  it("checks every piece of a name: the key, a nested key, the prefix and the separator", () => {
    const nested = stepValueEnv(
      { a: { "b=c": "1", "d\0": "2", "\udc00": "3", ok: "4" }, "\ud800": "5" },
      { aliases: false },
    );
    expect([...nested.env.keys()]).toEqual(["RECIPE_VAR_a", "RECIPE_VAR_a__ok"]);
    expect(nested.skipped.map((s) => s.reason)).toEqual([
      "invalid_name",
      "invalid_name",
      "invalid_name",
      "invalid_name",
    ]);
    // A bad prefix or separator spoils every name made with it.
    expect(stepValueEnv({ x: "1" }, { prefix: "P=", aliases: false }).env.size).toBe(0);
    const badSeparator = stepValueEnv({ x: { y: "1" } }, { nestedSeparator: "\0", aliases: false });
    expect([...badSeparator.env.keys()]).toEqual(["RECIPE_VAR_x"]);
    expect(badSeparator.skipped).toEqual([{ name: "RECIPE_VAR_x\0y", reason: "invalid_name" }]);
    // The empty name: no prefix, an empty key.
    expect(stepValueEnv({ "": "1" }, { prefix: "", aliases: false }).skipped).toEqual([
      { name: "", reason: "invalid_name" },
    ]);
  });

  it("finds a collision between nested names of different depths and a later top-level key", () => {
    const out = stepValueEnv(
      { a: { b: { c: "deep" } }, a__b: { c: "shallow" }, a__b__c: "top" },
      { aliases: false },
    );
    expect(out.env.get("RECIPE_VAR_a__b__c")).toBe("deep");
    expect(out.skipped).toEqual([
      { name: "RECIPE_VAR_a__b", reason: "name_collision" },
      { name: "RECIPE_VAR_a__b__c", reason: "name_collision" },
    ]);
  });

  it("is deterministic whatever the key insertion order", () => {
    const one = stepValueEnv({ b: 1, a: { y: 2, x: 1 } });
    const two = stepValueEnv({ a: { x: 1, y: 2 }, b: 1 });
    expect([...one.env.keys()]).toEqual([...two.env.keys()]);
  });
});
