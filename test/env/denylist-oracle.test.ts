/**
 * The denylist against an independent oracle: every name of
 * test/helpers/hostile-names.ts (written from the programs' documentation,
 * never from src/env/denylist.ts) must be refused to an untrusted layer that
 * asks for a bare name, in either spelling a key can have.
 *
 * Broken once on purpose: with the "VIM", "CONFIG_", "PYTEST_", "SSL" and
 * "TERM" prefixes removed from RESERVED_ENV_PREFIXES, the context and alias
 * tests below went red naming VIMINIT, CONFIG_SHELL, PYTEST_ADDOPTS,
 * SSLKEYLOGFILE and TERM; restored, green.
 */
import { describe, expect, it } from "vitest";
import { contextEnvPairs } from "../../src/env/context-export.js";
import { createDenylist, isReservedName } from "../../src/env/denylist.js";
import { layerEnv } from "../../src/env/layers.js";
import { stepValueEnv } from "../../src/env/step-values.js";
import { HOSTILE_NAMES } from "../helpers/hostile-names.js";

const spellings = HOSTILE_NAMES.flatMap((name) => [name, name.toLowerCase()]);

describe("the denylist against an independent list of hostile names", () => {
  it("refuses every listed name, upper- and lower-case", () => {
    const settable = spellings.filter((name) => !isReservedName(name));
    expect(settable).toEqual([]);
  });

  it("exports none of them as a bare context name", () => {
    const context = Object.fromEntries(spellings.map((name) => [name, "x"]));
    const { pairs } = contextEnvPairs(context, { mode: "bare", logger: false });
    const exported = pairs.map(([name]) => name).filter((name) => HOSTILE_NAMES.includes(name));
    expect(exported).toEqual([]);
  });

  it("lets no step-value alias through the layering with any of their names", () => {
    const values = Object.fromEntries(spellings.map((name) => [name, "x"]));
    const steps = stepValueEnv(values, { aliases: true });
    const layered = layerEnv({
      inherited: new Map(),
      stepValues: steps.env,
      denylist: createDenylist(),
      stepPrefix: "RECIPE_VAR_",
      bareNames: "any",
    });
    const set = [...layered.env.keys()].filter((name) => HOSTILE_NAMES.includes(name));
    expect(set).toEqual([]);
  });
});
