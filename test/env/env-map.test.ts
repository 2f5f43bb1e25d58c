import { describe, expect, it } from "vitest";
import { envMapOf } from "../../src/env/env-map.js";
import { InvalidEnvError } from "../../src/errors.js";

describe("envMapOf", () => {
  it("reads own enumerable keys, skips undefined, keeps prototype names ordinary", () => {
    const record = Object.create({ inherited: "no" }) as Record<string, string | undefined>;
    Object.defineProperty(record, "__proto__", { value: "p", enumerable: true });
    record["A"] = "1";
    record["SKIP"] = undefined;
    expect([...envMapOf(record, "x")]).toEqual([
      ["__proto__", "p"],
      ["A", "1"],
    ]);
  });

  it("accepts a Map and, when optional, nothing", () => {
    expect([...envMapOf(new Map([["A", "1"]]), "x")]).toEqual([["A", "1"]]);
    expect(envMapOf(undefined, "x").size).toBe(0);
    expect(() => envMapOf(undefined, "x", false)).toThrow(InvalidEnvError);
    expect(() => envMapOf(["A=1"], "x")).toThrow(InvalidEnvError);
  });
});
