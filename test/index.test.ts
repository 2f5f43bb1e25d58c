/**
 * The package's front door: the export list is pinned, so each addition (or
 * removal) is a decision (ARCHITECTURE.md "The front door of the package").
 * Internals (planners' building blocks, test seams, engine plumbing) are
 * behind no export at all.
 */
import { describe, expect, it } from "vitest";
import * as exactspawn from "../src/index.js";

/** Every value the package exports; types are pinned by the compiler where they are used. */
const EXPORTS = [
  "ContainmentError",
  "ENV_BUDGET_FLOOR",
  "ESSENTIAL_ENV_NAMES",
  "ESSENTIAL_ENV_PREFIXES",
  "EnvBudgetError",
  "FallbackUnsupportedError",
  "InputChunkError",
  "InvalidEnvError",
  "MAX_ARG_STRLEN",
  "PER_VALUE_ENV_CAP",
  "RECIPE_RUNNER_RESERVED_ENV_NAMES",
  "RESERVED_ENV_DENYLIST",
  "RESERVED_ENV_PREFIXES",
  "RESERVED_ENV_SUFFIXES",
  "SandboxError",
  "SpawnError",
  "SpillError",
  "SubprocessError",
  "TooManyKeysError",
  "UnsafeTmpdirError",
  "UntrustedSkipError",
  "boundedEnv",
  "cgroupSupport",
  "contextEnvPairs",
  "createContextExporter",
  "createDenylist",
  "createPipe",
  "createRuntime",
  "disableNative",
  "envByteBudget",
  "envPairBytes",
  "execFits",
  "isReservedName",
  "isSpillableName",
  "isStepError",
  "nativeStatus",
  "pidNamespaceSupport",
  "planSpill",
  "probeLimits",
  "recordImageEnv",
  "restoreImageEnv",
  "sandboxSupport",
  "setLogger",
  "spawn",
  "spawnSync",
];

describe("exports", () => {
  it("are exactly the public surface", () => {
    expect(Object.keys(exactspawn).sort()).toEqual([...EXPORTS].sort());
  });

  it("hold every stable name ARCHITECTURE.md lists", () => {
    for (const name of [
      "MAX_ARG_STRLEN",
      "PER_VALUE_ENV_CAP",
      "ENV_BUDGET_FLOOR",
      "envPairBytes",
      "probeLimits",
      "envByteBudget",
      "execFits",
      "contextEnvPairs",
      "RESERVED_ENV_DENYLIST",
      "isSpillableName",
      "planSpill",
      "boundedEnv",
      "restoreImageEnv",
      "spawn",
      "createRuntime",
      "EnvBudgetError",
      "SpawnError",
      "InvalidEnvError",
    ]) {
      expect(exactspawn).toHaveProperty(name);
    }
  });

  it("name the recipe runner's 22 reserved names after where they come from", () => {
    expect(exactspawn.RECIPE_RUNNER_RESERVED_ENV_NAMES).toHaveLength(22);
    expect(exactspawn.RECIPE_RUNNER_RESERVED_ENV_NAMES).toContain("LD_PRELOAD");
  });

  it("hold no internals or test hooks", () => {
    for (const name of [
      "WINDOWS_ESSENTIAL_ENV_NAMES",
      "SEED_RESERVED_ENV_NAMES",
      "writeSpillValues",
      "renderPreamble",
      "bashInvocation",
      "layerEnv",
      "systemError",
      "normalizeSandbox",
      "retiredFieldWarner",
    ]) {
      expect(name in exactspawn).toBe(false);
    }
  });
});
