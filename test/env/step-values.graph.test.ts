/**
 * Step values are data (issue 10, item 7): a value graph with cycles or
 * shared references is refused with a TypeError before any flattening, and a
 * Map key that is not a string is a TypeError without its code ever running.
 *
 * Broken once on purpose: with `assertTree` removed from stepValueEnv, the
 * 40 × 5 shared graph test did not finish within a minute (flattening visits
 * 40^4 paths, each JSON-encoding its subtree); with the Map-key check
 * replaced by the old silent skip, the key test went red. Restored, green.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stepValueEnv } from "../../src/env/step-values.js";

/** ~200 objects, 40 keys each, every level's keys all pointing at the same next-level object. */
function sharedGraph(keys: number, levels: number): Record<string, unknown> {
  let node: Record<string, unknown> = { leaf: "x" };
  for (let level = 0; level < levels; level++) {
    const parent: Record<string, unknown> = {};
    for (let k = 0; k < keys; k++) parent[`k${k}`] = node;
    node = parent;
  }
  return node;
}

describe("stepValueEnv: bounded planning", () => {
  it("refuses a graph with shared references (40 keys × 5 levels) with a TypeError", () => {
    expect(() => stepValueEnv({ graph: sharedGraph(40, 5) })).toThrow(TypeError);
    expect(() => stepValueEnv({ graph: sharedGraph(40, 5) })).toThrow(/shared reference/);
  });

  it("refuses a cycle, and a reference shared between two step values", () => {
    const cyclic: Record<string, unknown> = { a: "1" };
    cyclic["self"] = cyclic;
    expect(() => stepValueEnv({ cyclic })).toThrow(TypeError);
    const shared = { a: 1 };
    expect(() => stepValueEnv({ one: shared, two: shared })).toThrow(TypeError);
    const list: unknown[] = [];
    list.push(list);
    expect(() => stepValueEnv({ list })).toThrow(TypeError);
  });

  it("names the step value, never a value, in the error", () => {
    const secret = "SENTINEL-d41c";
    const node = { s: secret };
    try {
      stepValueEnv({ report: { a: node, b: node } });
      expect.unreachable();
    } catch (error) {
      expect(String((error as Error).message)).toContain("report");
      expect(String((error as Error).message)).not.toContain(secret);
    }
  });

  it("requires string Map keys and never calls a key's toString", () => {
    const calls: string[] = [];
    const key = {
      toString() {
        calls.push("toString");
        return "report";
      },
      [Symbol.toPrimitive]() {
        calls.push("toPrimitive");
        return "report";
      },
    };
    expect(() => stepValueEnv(new Map<unknown, unknown>([[key, "v"]]) as never)).toThrow(TypeError);
    expect(() => stepValueEnv(new Map<unknown, unknown>([[7, "v"]]) as never)).toThrow(
      /Map key 0 is a number/,
    );
    expect(calls).toEqual([]);
  });

  it("does not use an overridden Map iterator", () => {
    const values = new Map([["report", "v"]]);
    Object.defineProperty(values, Symbol.iterator, {
      value: () => {
        throw new Error("iterator ran");
      },
    });
    expect(stepValueEnv(values, { aliases: false }).env.get("RECIPE_VAR_report")).toBe("v");
  });

  it("property: any tree of JSON data plans, and one shared node anywhere is refused", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.jsonValue({ maxDepth: 4 })),
        fc.nat(),
        (tree, pick) => {
          // A tree (fc.jsonValue builds fresh objects) always plans.
          expect(() => stepValueEnv(tree)).not.toThrow();
          // Re-using any object or array of the tree at a second place is refused.
          const objects: object[] = [];
          const collect = (value: unknown): void => {
            if (value === null || typeof value !== "object") return;
            objects.push(value);
            for (const child of Object.values(value)) collect(child);
          };
          for (const value of Object.values(tree)) collect(value);
          if (objects.length === 0) return;
          const shared = objects[pick % objects.length]!;
          expect(() => stepValueEnv({ ...tree, zz_again: shared })).toThrow(TypeError);
        },
      ),
      { numRuns: 300 },
    );
  });
});
