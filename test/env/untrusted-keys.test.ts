/**
 * capUntrusted's boundary (src/env/untrusted-keys.ts): exactly `max`
 * untrusted variables are kept, never `max + 1`, whether the room runs out
 * among the step values or among the context's pairs, and the rest are
 * skipped with reason "too_many_keys".
 *
 * Seen red with either `room === 0` test turned into `room < 0` (one more
 * key kept than the cap: scripts/mutants.mjs rows key-cap-boundary-steps,
 * key-cap-boundary-context).
 */
import { describe, expect, it } from "vitest";
import type { ContextExport } from "../../src/env/context-export.js";
import { capUntrusted } from "../../src/env/untrusted-keys.js";

function context(names: string[]): ContextExport {
  return { pairs: names.map((name) => [name, "v"] as const), skipped: [] };
}

function kept(capped: ReturnType<typeof capUntrusted>): number {
  return (capped.stepValues?.size ?? 0) + (capped.context?.pairs.length ?? 0);
}

describe("the key cap keeps exactly max untrusted variables", () => {
  it("when the room runs out among the step values", () => {
    const steps = new Map(["A", "B", "C", "D", "E"].map((name) => [name, "v"]));
    const capped = capUntrusted(steps, context(["X", "Y"]), 3);
    expect([...capped.stepValues!.keys()]).toEqual(["A", "B", "C"]);
    expect(capped.context!.pairs).toEqual([]);
    expect(capped.skipped.map((s) => s.name)).toEqual(["D", "E", "X", "Y"]);
    expect(capped.skipped.every((s) => s.reason === "too_many_keys")).toBe(true);
  });

  it("when the room runs out among the context's pairs", () => {
    const steps = new Map([["A", "v"]]);
    const capped = capUntrusted(steps, context(["W", "X", "Y", "Z"]), 3);
    expect([...capped.stepValues!.keys()]).toEqual(["A"]);
    expect(capped.context!.pairs.map(([name]) => name)).toEqual(["W", "X"]);
    expect(capped.skipped.map((s) => s.name)).toEqual(["Y", "Z"]);
  });

  it("with declared names first, the total is still max", () => {
    const steps = new Map(["A", "B", "C"].map((name) => [name, "v"]));
    const capped = capUntrusted(steps, context(["X", "Y"]), 2, new Set(["Y"]));
    expect(kept(capped)).toBe(2);
    expect(capped.context!.pairs.map(([name]) => name)).toEqual(["Y"]);
    expect([...capped.stepValues!.keys()]).toEqual(["A"]);
  });

  it.each([1, 2, 7])("max %i: kept + skipped is everything, kept is max", (max) => {
    const steps = new Map(Array.from({ length: 6 }, (_, i) => [`S${i}`, "v"] as const));
    const capped = capUntrusted(steps, context(["P", "Q", "R", "T"]), max);
    expect(kept(capped)).toBe(max);
    expect(capped.skipped).toHaveLength(10 - max);
  });
});
