/** The package's front door: names that exist for readers of the docs. */
import { describe, expect, it } from "vitest";
import * as exactspawn from "../src/index.js";

describe("exports", () => {
  it("name the recipe runner's 22 reserved names after where they come from", () => {
    expect(exactspawn.RECIPE_RUNNER_RESERVED_ENV_NAMES).toBe(exactspawn.SEED_RESERVED_ENV_NAMES);
    expect(exactspawn.RECIPE_RUNNER_RESERVED_ENV_NAMES).toHaveLength(22);
    expect(exactspawn.RECIPE_RUNNER_RESERVED_ENV_NAMES).toContain("LD_PRELOAD");
  });

  it("no longer carry the unused Windows essentials list (the child is always Linux)", () => {
    expect("WINDOWS_ESSENTIAL_ENV_NAMES" in exactspawn).toBe(false);
  });
});
