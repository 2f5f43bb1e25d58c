import { describe, expect, it } from "vitest";
import { freezeMap, isFrozenMap } from "../../src/env/frozen-map.js";

describe("freezeMap", () => {
  it("refuses set, delete and clear", () => {
    const map = freezeMap(new Map([["A", "1"]])) as Map<string, string>;
    expect(() => map.set("B", "2")).toThrow(TypeError);
    expect(() => map.delete("A")).toThrow(TypeError);
    expect(() => map.clear()).toThrow(TypeError);
    expect([...map]).toEqual([["A", "1"]]);
  });

  it("registers only the maps it froze", () => {
    const plain = new Map([["A", "1"]]);
    expect(isFrozenMap(plain)).toBe(false);
    expect(isFrozenMap(Object.freeze(new Map([["A", "1"]])))).toBe(false);
    expect(isFrozenMap(freezeMap(plain))).toBe(true);
  });
});
