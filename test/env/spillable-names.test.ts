/**
 * isSpillableName admits only what the preamble can assign as written: an
 * ASCII identifier that is not special to bash. A spilled variable's name is
 * written into the preamble as shell text (`NAME=$from`), so a name such as
 * `X;touch pwned` or `A B` must never be called spillable: it is dropped
 * with a warning instead (planSpill is public, so its caller's names are not
 * known to have passed the identifier rule). No test held the identifier
 * part of it before (issue 27: the mutation audit).
 *
 * Seen red with `npm run test:mutants -- --only spillable-identifier`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isSpillableName } from "../../src/env/names.js";

describe("isSpillableName", () => {
  it.each([
    ["RECIPE_VAR_X", true],
    ["_private", true],
    ["a1", true],
    ["X;touch pwned", false],
    ["A B", false],
    ["a-b", false],
    ["1A", false],
    ["", false],
    ["café", false],
    ["A=B", false],
    ["$(id)", false],
    ["IFS", false],
    ["BASH_ENV", false],
    ["COMP_WORDS", false],
  ])("%j → %s", (name, ok) => {
    expect(isSpillableName(name)).toBe(ok);
  });

  it("never calls a name with a character outside [A-Za-z0-9_] spillable (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1 }), (name) => {
        if (/[^A-Za-z0-9_]/.test(name)) expect(isSpillableName(name)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});
