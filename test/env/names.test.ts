import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiUpper, isUpperIdentifier, validateNameList } from "../../src/env/names.js";

describe("asciiUpper", () => {
  it.each([
    ["task_description", "TASK_DESCRIPTION"],
    ["café", "CAFé"],
    ["straße", "STRAßE"],
    ["ı", "ı"],
    ["", ""],
  ])("%j → %j", (input, output) => {
    expect(asciiUpper(input)).toBe(output);
  });

  it("changes only a-z, for any string (property)", () => {
    const reference = (text: string) => text.replace(/[a-z]/g, (c) => c.toUpperCase());
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(asciiUpper(text)).toBe(reference(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("isUpperIdentifier", () => {
  it.each([
    ["A", true],
    ["_", true],
    ["A1_B", true],
    ["1A", false],
    ["", false],
    ["a", false],
    ["A B", false],
  ])("%j → %s", (name, ok) => {
    expect(isUpperIdentifier(name)).toBe(ok);
  });
});

describe("validateNameList", () => {
  it("returns a frozen copy", () => {
    const list = ["A", "B"];
    const out = validateNameList(list, "allow");
    list.push("C");
    expect(out).toEqual(["A", "B"]);
    expect(Object.isFrozen(out)).toBe(true);
  });
});
